import { groupCommitOf } from "./group-commit";
import { SqliteOwnedKeys } from "./sqlite-owned-keys";
import { SqliteLimitLog } from "./sqlite-limit-log";
import { sql } from "drizzle-orm";
import { SqliteChannels } from "./sqlite-channels";
import type { Storage } from "../storage";
import { openSqlite } from "./open-sqlite";
import { SqliteWindowLog } from "./sqlite-window-log";
import { SqliteSessionGenerations } from "./sqlite-session-generations";
import { SqlitePaymentLedger } from "./sqlite-payment-ledger";
import { SqlitePrepaidKeys } from "./sqlite-prepaid-keys";
import { SqlitePaidAnswers } from "./sqlite-paid-answers";
import { SqliteQuoteHolds } from "./sqlite-quote-holds";
import { SqlitePayerHolds } from "./sqlite-payer-holds";

/** The stores over one SQLite file, migrated; `walFlush` for a server's long-lived connection. */
export function openSqliteStorage(path: string, options: { walFlush?: boolean } = {}): Storage {
  const database = openSqlite(path, options);
  const running = new Set<string>();
  return {
    engine: "sqlite",
    ledger: new SqlitePaymentLedger(database),
    prepaidKeys: new SqlitePrepaidKeys(database),
    ownedKeys: new SqliteOwnedKeys(database),
    windowLog: new SqliteWindowLog(database),
    limitLog: new SqliteLimitLog(database),
    quoteHolds: new SqliteQuoteHolds(database),
    payerHolds: new SqlitePayerHolds(database),
    paidAnswers: new SqlitePaidAnswers(database),
    sessions: new SqliteSessionGenerations(database),
    channels: new SqliteChannels(database),
    exclusive: (name, work) => exclusively(running, name, work),
    ping: async () => void database.get(sql`select 1`),
    close: async () => {
      groupCommitOf(database.$client).settle();
      database.$client.close();
    },
  };
}

/** Runs `work` unless work of that name runs over this storage: SQLite serves one process (or machine). */
async function exclusively<T>(running: Set<string>, name: string, work: () => Promise<T>): Promise<T | undefined> {
  if (running.has(name)) return undefined;
  running.add(name);
  try {
    return await work();
  } finally {
    running.delete(name);
  }
}

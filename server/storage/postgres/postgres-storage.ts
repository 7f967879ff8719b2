import { PostgresOwnedKeys } from "./postgres-owned-keys";
import { PostgresLimitLog } from "./postgres-limit-log";
import { createHash } from "node:crypto";
import type pg from "pg";
import type { Storage } from "../storage";
import { PostgresChannels } from "./postgres-channels";
import { openPostgres, type PoolOptions } from "./open-postgres";
import { PostgresWindowLog } from "./postgres-window-log";
import { PostgresSessionGenerations } from "./postgres-session-generations";
import { PostgresPaymentLedger } from "./postgres-payment-ledger";
import { PostgresPrepaidKeys } from "./postgres-prepaid-keys";
import { PostgresPaidAnswers } from "./postgres-paid-answers";
import { PostgresQuoteHolds } from "./postgres-quote-holds";
import { PostgresPayerHolds } from "./postgres-payer-holds";

/** The stores over a pool of connections to the PostgreSQL database at `url`, migrated. */
export async function openPostgresStorage(url: string, pool: PoolOptions): Promise<Storage> {
  const database = await openPostgres(url, pool);
  return {
    engine: "postgresql",
    ledger: new PostgresPaymentLedger(database),
    prepaidKeys: new PostgresPrepaidKeys(database),
    ownedKeys: new PostgresOwnedKeys(database),
    windowLog: new PostgresWindowLog(database),
    limitLog: new PostgresLimitLog(database),
    quoteHolds: new PostgresQuoteHolds(database),
    payerHolds: new PostgresPayerHolds(database),
    paidAnswers: new PostgresPaidAnswers(database),
    sessions: new PostgresSessionGenerations(database),
    channels: new PostgresChannels(database),
    exclusive: (name, work) => exclusively(database.$client, name, work),
    ping: async () => void (await database.$client.query("select 1")),
    close: () => database.$client.end(),
  };
}

/** The advisory lock of a name: a key of its own, held by one session of the server at a time. */
async function exclusively<T>(pool: pg.Pool, name: string, work: () => Promise<T>): Promise<T | undefined> {
  const key = createHash("sha256").update(`paysvc:${name}`).digest().readBigInt64BE(0).toString();
  const client = await pool.connect();
  try {
    const { rows } = await client.query<{ held: boolean }>("select pg_try_advisory_lock($1) as held", [key]);
    if (!rows[0]?.held) return undefined;
    try {
      return await work();
    } finally {
      await client.query("select pg_advisory_unlock($1)", [key]);
    }
  } finally {
    client.release();
  }
}

import type { Storage } from "../storage";
import { PostgresChannels } from "./postgres-channels";
import { openPostgres, type PoolOptions } from "./open-postgres";
import { PostgresFreeChatLog } from "./postgres-free-chat-log";
import { PostgresPaymentLedger } from "./postgres-payment-ledger";
import { PostgresPrepaidKeys } from "./postgres-prepaid-keys";
import { PostgresPaidAnswers } from "./postgres-paid-answers";
import { PostgresQuoteHolds } from "./postgres-quote-holds";

/** The stores over a pool of connections to the PostgreSQL database at `url`, migrated. */
export async function openPostgresStorage(url: string, pool: PoolOptions): Promise<Storage> {
  const database = await openPostgres(url, pool);
  return {
    engine: "postgresql",
    ledger: new PostgresPaymentLedger(database),
    prepaidKeys: new PostgresPrepaidKeys(database),
    freeChatLog: new PostgresFreeChatLog(database),
    quoteHolds: new PostgresQuoteHolds(database),
    paidAnswers: new PostgresPaidAnswers(database),
    channels: new PostgresChannels(database),
    ping: async () => void (await database.$client.query("select 1")),
    close: () => database.$client.end(),
  };
}

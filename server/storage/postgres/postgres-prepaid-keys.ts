import { and, eq, inArray, sql } from "drizzle-orm";
import { hashPrepaidCode, sameHash } from "../../prepaid/prepaid-code";
import {
  newKeyValues,
  type KeyExtras,
  randomReservationId,
  withReservationId,
  type KeyBalance,
  type PrepaidKey,
  type PrepaidKeyStore,
  type PrepaidSummary,
  type Reservation,
  type TokenRequest,
} from "../../prepaid/prepaid-key-store";
import type { PostgresDatabase } from "./open-postgres";
import { prepaidSummarySql } from "../prepaid-summary-sql";
import { prepaidKeys } from "./schema";

/**
 * Prepaid keys on PostgreSQL, for any number of instances: reserving is one call of paysvc_reserve (one update
 * of the key row's count of reserved tokens, guarded by what is left), settling one of paysvc_settle (migration
 * 0002 says why neither waits for the disk). The hot statements are named, so each
 * connection parses them once.
 */
export class PostgresPrepaidKeys implements PrepaidKeyStore {
  constructor(
    private readonly database: PostgresDatabase,
    /** A new reservation's id; random, see sqlite/schema.ts. Tests choose their own. */
    private readonly newReservationId: () => number = randomReservationId,
  ) {}

  async summary(since: Date): Promise<PrepaidSummary> {
    const { rows } = await this.database.$client.query<PrepaidSummary>({
      text: prepaidSummarySql("$1", (sum) => `(${sum})::float8`),
      values: [since],
    });
    return rows[0]!;
  }

  async issue(
    code: string,
    model: string,
    totalTokens: number,
    paymentNonce: string | undefined,
    extra?: KeyExtras,
  ): Promise<number> {
    const [row] = await this.database
      .insert(prepaidKeys)
      .values(newKeyValues(code, model, totalTokens, paymentNonce, extra))
      .returning({ id: prepaidKeys.id });
    if (!row) throw new Error("prepaid key insert returned no row");
    return row.id;
  }

  async voidUnpaid(id: number): Promise<void> {
    await this.database
      .update(prepaidKeys)
      .set({ status: "void", updatedAt: new Date() })
      .where(and(eq(prepaidKeys.id, id), eq(prepaidKeys.status, "active"), eq(prepaidKeys.usedTokens, 0)));
  }

  async voidBoughtWith(paymentNonce: string): Promise<boolean> {
    const voided = await this.database
      .update(prepaidKeys)
      .set({ status: "void", updatedAt: new Date() })
      .where(and(eq(prepaidKeys.paymentNonce, paymentNonce), inArray(prepaidKeys.status, ["active", "disabled"])))
      .returning({ id: prepaidKeys.id });
    return voided.length > 0;
  }

  async limitsOf(keyId: number): Promise<string | null | undefined> {
    const { rows } = await this.database.$client.query<{ limits: string | null }>(
      "select limits from prepaid_keys where id = $1",
      [keyId],
    );
    return rows[0] ? rows[0].limits : undefined;
  }

  async findByCode(code: string): Promise<PrepaidKey | undefined> {
    const codeHash = hashPrepaidCode(code);
    const { rows } = await this.database.$client.query<PrepaidKey>({
      name: "paysvc_key_by_code",
      text: `select id::float8 as "id", code_hash as "codeHash", model, total_tokens::float8 as "totalTokens",
        used_tokens::float8 as "usedTokens", status, limits from prepaid_keys where code_hash = $1`,
      values: [codeHash],
    });
    const [key] = rows;
    if (!key || !sameHash(key.codeHash, codeHash)) return undefined;
    return key.status === "active" || key.status === "disabled" ? key : undefined;
  }

  async balance(keyId: number, now = Date.now()): Promise<KeyBalance> {
    const { rows } = await this.database.$client.query<{ total: number; used: number; reserved: number }>({
      name: "paysvc_balance",
      text: "select total::float8, used::float8, reserved::float8 from paysvc_balance($1, $2)",
      values: [keyId, new Date(now)],
    });
    const [row] = rows;
    if (!row) throw new Error(`no prepaid key ${keyId}`);
    return { ...row, remaining: Math.max(0, row.total - row.used - row.reserved) };
  }

  async reserve(code: string, model: string, tokens: TokenRequest, ttlMs: number): Promise<Reservation | undefined> {
    const now = Date.now();
    const { inputTokens, maxOutputTokens } = tokens;
    const values = [hashPrepaidCode(code), model, inputTokens, maxOutputTokens];
    const collided = (error: unknown) => (error as { code?: string }).code === "23505";
    const row = await withReservationId(this.newReservationId, collided, async (id) => {
      const { rows } = await this.database.$client.query<{ keyId: number; id: number; tokens: number }>({
        name: "paysvc_reserve",
        text: `select reserved_key_id::float8 as "keyId", reservation_id::float8 as id, reserved_tokens::float8 as tokens
          from paysvc_reserve($1, $2, $3, $4, $5, $6, $7)`,
        values: [...values, id, new Date(now), new Date(now + ttlMs)],
      });
      return rows[0];
    });
    return row && { keyId: row.keyId, id: row.id, allowedOutput: row.tokens - inputTokens };
  }

  async extend(reservation: Reservation, ttlMs: number): Promise<void> {
    await this.database.$client.query({
      name: "paysvc_extend_reservation",
      text: "update prepaid_reservations set expires_at = $3 where key_id = $1 and id = $2",
      values: [reservation.keyId, reservation.id, new Date(Date.now() + ttlMs)],
    });
  }

  async settle(reservation: Reservation, usedTokens: number): Promise<number> {
    const { rows } = await this.database.$client.query<{ remaining: number }>({
      name: "paysvc_settle_reservation",
      text: "select paysvc_settle($1, $2, $3, $4)::float8 as remaining",
      values: [reservation.keyId, reservation.id, usedTokens, new Date()],
    });
    return rows[0]?.remaining ?? 0;
  }

  /** Sweeps the keys in the order of their ids, so two instances sweeping at once cannot deadlock. */
  async deleteExpired(now = Date.now()): Promise<void> {
    const at = new Date(now);
    await this.database.execute(sql`select coalesce(sum(paysvc_sweep_reservations(expired.key_id, ${at})), 0)
      from (select distinct key_id from prepaid_reservations where expires_at <= ${at} order by key_id) expired`);
  }
}

import { and, eq, sql } from "drizzle-orm";
import { hashPrepaidCode, sameHash } from "../../prepaid/prepaid-code";
import {
  randomReservationId,
  withReservationId,
  type KeyBalance,
  type PrepaidKey,
  type PrepaidKeyStore,
  type Reservation,
  type TokenRequest,
} from "../../prepaid/prepaid-key-store";
import type { PostgresDatabase } from "./open-postgres";
import { prepaidKeys } from "./schema";

/**
 * Ends a reservation and charges what it held at most, in one statement: the DELETE that ends it feeds the UPDATE
 * that charges, so a reservation is charged once however many settle it, and the key's row lock orders the
 * charge with the reservations of other instances (see paysvc_reserve in migration 0001).
 */
const SETTLE = `
  with ended as (delete from prepaid_reservations where key_id = $1 and id = $2 returning tokens)
  update prepaid_keys k set
    used_tokens = k.used_tokens + c.charge,
    status = case when k.used_tokens + c.charge >= k.total_tokens then 'disabled' else k.status end,
    updated_at = $4
  from (select greatest(0, least($3::bigint, tokens)) as charge from ended) c
  where k.id = $1`;

/**
 * Prepaid keys on PostgreSQL, for any number of instances: reserving is one call of paysvc_reserve (which locks
 * the key row, then sums the live reservations), settling one statement. The hot statements are named, so each
 * connection parses them once.
 */
export class PostgresPrepaidKeys implements PrepaidKeyStore {
  constructor(
    private readonly database: PostgresDatabase,
    /** A new reservation's id; random, see sqlite/schema.ts. Tests choose their own. */
    private readonly newReservationId: () => number = randomReservationId,
  ) {}

  async issue(code: string, model: string, totalTokens: number, paymentNonce: string | undefined): Promise<number> {
    const now = new Date();
    const [row] = await this.database
      .insert(prepaidKeys)
      .values({
        codeHash: hashPrepaidCode(code),
        model,
        totalTokens,
        status: "active",
        paymentNonce,
        createdAt: now,
        updatedAt: now,
      })
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

  async findByCode(code: string): Promise<PrepaidKey | undefined> {
    const codeHash = hashPrepaidCode(code);
    const { rows } = await this.database.$client.query<PrepaidKey>({
      name: "paysvc_key_by_code",
      text: `select id::float8 as "id", code_hash as "codeHash", model, total_tokens::float8 as "totalTokens",
        used_tokens::float8 as "usedTokens", status from prepaid_keys where code_hash = $1`,
      values: [codeHash],
    });
    const [key] = rows;
    if (!key || !sameHash(key.codeHash, codeHash)) return undefined;
    return key.status === "active" || key.status === "disabled" ? key : undefined;
  }

  async balance(keyId: number, now = Date.now()): Promise<KeyBalance> {
    const { rows } = await this.database.$client.query<{ total: number; used: number; reserved: number }>(
      `select k.total_tokens::float8 as total, k.used_tokens::float8 as used,
        (select coalesce(sum(r.tokens), 0) from prepaid_reservations r
          where r.key_id = k.id and r.expires_at > $2)::float8 as reserved
      from prepaid_keys k where k.id = $1`,
      [keyId, new Date(now)],
    );
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

  async settle(reservation: Reservation, usedTokens: number): Promise<void> {
    await this.database.$client.query({
      name: "paysvc_settle_reservation",
      text: SETTLE,
      values: [reservation.keyId, reservation.id, usedTokens, new Date()],
    });
  }

  async deleteExpired(now = Date.now()): Promise<void> {
    await this.database.execute(sql`delete from prepaid_reservations where expires_at <= ${new Date(now)}`);
  }
}

import { and, eq, sql } from "drizzle-orm";
import type { AppDatabase } from "../storage/database";
import { prepaidKeys, prepaidReservations, type PrepaidKeyStatus } from "../storage/schema";
import { hashPrepaidCode, sameHash } from "./prepaid-code";

export interface PrepaidKey {
  id: number;
  codeHash: string;
  model: string;
  totalTokens: number;
  usedTokens: number;
  status: PrepaidKeyStatus;
}

export interface KeyBalance {
  total: number;
  used: number;
  reserved: number;
  remaining: number;
}

/**
 * Prepaid keys and their token budgets. The budget invariant (used + live reservations <= total) is kept by the
 * database: a reservation is one conditional INSERT, settling one is one transaction, never read-then-write.
 */
export class PrepaidKeyStore {
  // The statements of every prepaid call, built once: drizzle's query building cost more than running them.
  private readonly byCodeHash;
  private readonly reservation;
  private readonly settlement;
  private readonly extendReservation;

  constructor(private readonly database: AppDatabase) {
    this.byCodeHash = database
      .select()
      .from(prepaidKeys)
      .where(eq(prepaidKeys.codeHash, sql.placeholder("codeHash")))
      .prepare();
    this.reservation = reservationStatement(database);
    this.settlement = settlementTransaction(database);
    this.extendReservation = database
      .update(prepaidReservations)
      .set({ expiresAt: sql`${sql.placeholder("expiresAtMs")}` })
      .where(eq(prepaidReservations.id, sql.placeholder("id")))
      .prepare();
  }

  /** A key that cannot be used until `activate`: created before its payment settles. */
  createPending(code: string, model: string, totalTokens: number, paymentNonce: string | undefined): number {
    const now = new Date();
    const [row] = this.database
      .insert(prepaidKeys)
      .values({
        codeHash: hashPrepaidCode(code),
        model,
        totalTokens,
        status: "pending",
        paymentNonce,
        createdAt: now,
        updatedAt: now,
      })
      .returning({ id: prepaidKeys.id })
      .all();
    if (!row) throw new Error("prepaid key insert returned no row");
    return row.id;
  }

  /** pending -> active (payment settled) or void (it never will). */
  finishPending(id: number, status: "active" | "void"): void {
    this.database
      .update(prepaidKeys)
      .set({ status, updatedAt: new Date() })
      .where(and(eq(prepaidKeys.id, id), eq(prepaidKeys.status, "pending")))
      .run();
  }

  /** The usable or used-up key a code names; pending and void keys do not exist for callers. */
  findByCode(code: string): PrepaidKey | undefined {
    const codeHash = hashPrepaidCode(code);
    const key = this.byCodeHash.get({ codeHash });
    if (!key || !sameHash(key.codeHash, codeHash)) return undefined;
    return key.status === "active" || key.status === "disabled" ? key : undefined;
  }

  balance(keyId: number, now = Date.now()): KeyBalance {
    const row = this.database.get<{ total: number; used: number; reserved: number }>(sql`
      select k.total_tokens as total, k.used_tokens as used,
        (select coalesce(sum(r.tokens), 0) from prepaid_reservations r where r.key_id = k.id and r.expires_at > ${now}) as reserved
      from prepaid_keys k where k.id = ${keyId}`);
    if (!row) throw new Error(`no prepaid key ${keyId}`);
    return { ...row, remaining: Math.max(0, row.total - row.used - row.reserved) };
  }

  /**
   * Holds the input plus up to `maxOutputTokens` of an active key's budget, lowering the output to what is left
   * (at least one token) in one atomic statement: the free balance is read and the reservation written by the
   * same INSERT, so no other call can take the same tokens in between. Undefined when not even input + 1 is free.
   */
  reserve(
    keyId: number,
    tokens: { inputTokens: number; maxOutputTokens: number },
    ttlMs: number,
  ): { id: number; allowedOutput: number } | undefined {
    const now = Date.now();
    const { inputTokens, maxOutputTokens } = tokens;
    const row = this.reservation.get({ keyId, inputTokens, maxOutputTokens, now, expiresAtMs: now + ttlMs });
    return row && { id: row.id, allowedOutput: row.tokens - inputTokens };
  }

  /** Keeps a reservation alive while its call runs. */
  extend(reservationId: number, ttlMs: number): void {
    this.extendReservation.run({ id: reservationId, expiresAtMs: Date.now() + ttlMs });
  }

  /**
   * Ends a reservation, charging `usedTokens` of it (never more than it held) and disabling the key once its
   * budget is spent. Charging 0 releases it whole. A reservation already ended is not charged twice.
   */
  settle(reservationId: number, usedTokens: number): void {
    this.settlement(reservationId, usedTokens);
  }

  /** Reservations whose process died long ago; they no longer count, this only tidies the table. */
  deleteExpired(now = Date.now()): void {
    this.database.run(sql`delete from prepaid_reservations where expires_at <= ${now}`);
  }
}

/**
 * The reservation's INSERT ... SELECT: the free balance of an active key (its total less what is used and what
 * live reservations hold) is read by the statement that writes the reservation, which lowers the output to what
 * is free. Built and compiled once.
 */
function reservationStatement(database: AppDatabase) {
  const now = sql.placeholder("now");
  const inputTokens = sql.placeholder("inputTokens");
  const held = sql`coalesce((select sum(${prepaidReservations.tokens}) from ${prepaidReservations}
    where ${prepaidReservations.keyId} = ${prepaidKeys.id} and ${prepaidReservations.expiresAt} > ${now}), 0)`;
  const free = database.$with("free").as(
    database
      .select({
        keyId: sql<number>`${prepaidKeys.id}`.as("key_id"),
        tokens: sql<number>`${prepaidKeys.totalTokens} - ${prepaidKeys.usedTokens} - ${held}`.as("tokens"),
      })
      .from(prepaidKeys)
      .where(and(eq(prepaidKeys.id, sql.placeholder("keyId")), eq(prepaidKeys.status, "active"))),
  );
  return database
    .with(free)
    .insert(prepaidReservations)
    .select(
      database
        // Every column of the table, in its order, as drizzle's INSERT ... SELECT asks; null lets SQLite number it.
        .select({
          id: sql<number>`null`.as("id"),
          keyId: free.keyId,
          tokens:
            sql<number>`${inputTokens} + min(${sql.placeholder("maxOutputTokens")}, ${free.tokens} - ${inputTokens})`.as(
              "tokens",
            ),
          // Placeholders in sql`` are bound as given: times in ms, as timestamp_ms columns hold them.
          expiresAt: sql<Date>`${sql.placeholder("expiresAtMs")}`.as("expires_at"),
          createdAt: sql<Date>`${now}`.as("created_at"),
        })
        .from(free)
        .where(sql`${free.tokens} >= ${inputTokens} + 1`),
    )
    .returning({ id: prepaidReservations.id, tokens: prepaidReservations.tokens })
    .prepare();
}

/**
 * Ends a reservation and charges what it held at most, in one transaction. The transaction function is the
 * driver's, built once: drizzle's `transaction()` builds its wrappers on every call, which cost more than the two
 * statements. The statements are drizzle's, prepared once; they run on the same connection, so inside it.
 */
function settlementTransaction(database: AppDatabase): (reservationId: number, usedTokens: number) => void {
  const endReservation = database
    .delete(prepaidReservations)
    .where(eq(prepaidReservations.id, sql.placeholder("id")))
    .returning({ keyId: prepaidReservations.keyId, tokens: prepaidReservations.tokens })
    .prepare();
  const charge = sql.placeholder("charge");
  const chargeKey = database
    .update(prepaidKeys)
    .set({
      usedTokens: sql`${prepaidKeys.usedTokens} + ${charge}`,
      status: sql`case when ${prepaidKeys.usedTokens} + ${charge} >= ${prepaidKeys.totalTokens} then 'disabled' else ${prepaidKeys.status} end`,
      updatedAt: sql`${sql.placeholder("updatedAtMs")}`,
    })
    .where(eq(prepaidKeys.id, sql.placeholder("keyId")))
    .prepare();
  return database.$client.transaction((reservationId: number, usedTokens: number) => {
    const [reservation] = endReservation.all({ id: reservationId });
    if (!reservation) return;
    const charged = Math.max(0, Math.min(usedTokens, reservation.tokens));
    chargeKey.run({ keyId: reservation.keyId, charge: charged, updatedAtMs: Date.now() });
  });
}

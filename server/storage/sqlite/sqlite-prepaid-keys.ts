import { and, eq, sql } from "drizzle-orm";
import { hashPrepaidCode, sameHash } from "../../prepaid/prepaid-code";
import {
  newKeyValues,
  randomReservationId,
  withReservationId,
  type KeyBalance,
  type PrepaidKey,
  type PrepaidKeyStore,
  type Reservation,
  type TokenRequest,
} from "../../prepaid/prepaid-key-store";
import type { SqliteDatabase } from "./open-sqlite";
import { prepaidKeys, prepaidReservations } from "./schema";

/** The reservation the placeholders `keyId` and `id` name: its primary key. */
const namedReservation = and(
  eq(prepaidReservations.keyId, sql.placeholder("keyId")),
  eq(prepaidReservations.id, sql.placeholder("id")),
);

/**
 * Prepaid keys on SQLite: reserving and settling are one transaction each. SQLite runs one writer at a time, across
 * processes too, so the free balance the reservation's INSERT reads is the one it writes against.
 */
export class SqlitePrepaidKeys implements PrepaidKeyStore {
  // The statements of every prepaid call, built once: drizzle's query building cost more than running them.
  private readonly byCodeHash;
  private readonly reservation;
  private readonly settlement;
  private readonly extendReservation;

  constructor(
    private readonly database: SqliteDatabase,
    /** A new reservation's id; random, see schema.ts. Tests choose their own. */
    private readonly newReservationId: () => number = randomReservationId,
  ) {
    this.byCodeHash = database
      .select()
      .from(prepaidKeys)
      .where(eq(prepaidKeys.codeHash, sql.placeholder("codeHash")))
      .prepare();
    this.reservation = reservationTransaction(database);
    this.settlement = settlementTransaction(database);
    this.extendReservation = database
      .update(prepaidReservations)
      .set({ expiresAt: sql`${sql.placeholder("expiresAtMs")}` })
      .where(namedReservation)
      .prepare();
  }

  async issue(code: string, model: string, totalTokens: number, paymentNonce: string | undefined): Promise<number> {
    const [row] = this.database
      .insert(prepaidKeys)
      .values(newKeyValues(code, model, totalTokens, paymentNonce))
      .returning({ id: prepaidKeys.id })
      .all();
    if (!row) throw new Error("prepaid key insert returned no row");
    return row.id;
  }

  async voidUnpaid(id: number): Promise<void> {
    this.database
      .update(prepaidKeys)
      .set({ status: "void", updatedAt: new Date() })
      .where(and(eq(prepaidKeys.id, id), eq(prepaidKeys.status, "active"), eq(prepaidKeys.usedTokens, 0)))
      .run();
  }

  async findByCode(code: string): Promise<PrepaidKey | undefined> {
    const codeHash = hashPrepaidCode(code);
    const key = this.byCodeHash.get({ codeHash });
    if (!key || !sameHash(key.codeHash, codeHash)) return undefined;
    return key.status === "active" || key.status === "disabled" ? key : undefined;
  }

  async balance(keyId: number, now = Date.now()): Promise<KeyBalance> {
    const row = this.database.get<{ total: number; used: number; reserved: number }>(sql`
      select k.total_tokens as total, k.used_tokens as used,
        (select coalesce(sum(r.tokens), 0) from prepaid_reservations r where r.key_id = k.id and r.expires_at > ${now}) as reserved
      from prepaid_keys k where k.id = ${keyId}`);
    if (!row) throw new Error(`no prepaid key ${keyId}`);
    return { ...row, remaining: Math.max(0, row.total - row.used - row.reserved) };
  }

  /**
   * One statement finds the key and writes the reservation: the free balance is read by the INSERT that writes
   * it, so no other call can take the same tokens in between. The key's expired reservations are deleted first, in
   * the same transaction: tokens an expired reservation held go to another only once it is gone, so its late
   * settlement (a process that stalled past the expiry) finds nothing to charge and cannot overspend the key.
   */
  async reserve(code: string, model: string, tokens: TokenRequest, ttlMs: number): Promise<Reservation | undefined> {
    const now = Date.now();
    const { inputTokens, maxOutputTokens } = tokens;
    const values = {
      codeHash: hashPrepaidCode(code),
      model,
      inputTokens,
      maxOutputTokens,
      now,
      expiresAtMs: now + ttlMs,
    };
    const collided = (error: unknown) => (error as { code?: string }).code === "SQLITE_CONSTRAINT_PRIMARYKEY";
    const row = await withReservationId(this.newReservationId, collided, async (id) =>
      this.reservation({ ...values, id }),
    );
    return row && { keyId: row.keyId, id: row.id, allowedOutput: row.tokens - inputTokens };
  }

  async extend(reservation: Reservation, ttlMs: number): Promise<void> {
    this.extendReservation.run({ keyId: reservation.keyId, id: reservation.id, expiresAtMs: Date.now() + ttlMs });
  }

  async settle(reservation: Reservation, usedTokens: number): Promise<number> {
    this.settlement(reservation, usedTokens);
    return (await this.balance(reservation.keyId)).remaining;
  }

  async deleteExpired(now = Date.now()): Promise<void> {
    this.database.run(sql`delete from prepaid_reservations where expires_at <= ${now}`);
  }
}

type ReservationValues = {
  codeHash: string;
  model: string;
  inputTokens: number;
  maxOutputTokens: number;
  id: number;
  now: number;
  expiresAtMs: number;
};

/**
 * The reservation's transaction: the key's expired reservations are deleted, then an INSERT ... SELECT reads the
 * active key of the code's hash and the model and its free balance (its total less what is used and what its
 * reservations hold) and writes the reservation, lowering the output to what is free. Built and compiled once.
 */
function reservationTransaction(database: SqliteDatabase) {
  const now = sql.placeholder("now");
  const inputTokens = sql.placeholder("inputTokens");
  const theKey = and(
    eq(prepaidKeys.codeHash, sql.placeholder("codeHash")),
    eq(prepaidKeys.model, sql.placeholder("model")),
    eq(prepaidKeys.status, "active"),
  );
  const sweep = database
    .delete(prepaidReservations)
    .where(
      and(
        sql`${prepaidReservations.keyId} = (select ${prepaidKeys.id} from ${prepaidKeys} where ${theKey})`,
        sql`${prepaidReservations.expiresAt} <= ${now}`,
      ),
    )
    .prepare();
  const held = sql`coalesce((select sum(${prepaidReservations.tokens}) from ${prepaidReservations}
    where ${prepaidReservations.keyId} = ${prepaidKeys.id}), 0)`;
  const free = database.$with("free").as(
    database
      .select({
        keyId: sql<number>`${prepaidKeys.id}`.as("key_id"),
        tokens: sql<number>`${prepaidKeys.totalTokens} - ${prepaidKeys.usedTokens} - ${held}`.as("tokens"),
      })
      .from(prepaidKeys)
      .where(theKey),
  );
  const insert = database
    .with(free)
    .insert(prepaidReservations)
    .select(
      database
        // Every column of the table, in its order, as drizzle's INSERT ... SELECT asks.
        .select({
          keyId: free.keyId,
          id: sql<number>`${sql.placeholder("id")}`.as("id"),
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
    .returning({ keyId: prepaidReservations.keyId, id: prepaidReservations.id, tokens: prepaidReservations.tokens })
    .prepare();
  return database.$client.transaction((values: ReservationValues) => {
    sweep.run(values);
    return insert.get(values);
  });
}

/**
 * Ends a reservation and charges what it held at most, in one transaction. The transaction function is the
 * driver's, built once: drizzle's `transaction()` builds its wrappers on every call, which cost more than the two
 * statements. The statements are drizzle's, prepared once; they run on the same connection, so inside it.
 */
function settlementTransaction(database: SqliteDatabase): (reservation: Reservation, usedTokens: number) => void {
  const endReservation = database
    .delete(prepaidReservations)
    .where(namedReservation)
    .returning({ tokens: prepaidReservations.tokens })
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
  return database.$client.transaction((reservation: Reservation, usedTokens: number) => {
    const [held] = endReservation.all({ keyId: reservation.keyId, id: reservation.id });
    if (!held) return;
    const charged = Math.max(0, Math.min(usedTokens, held.tokens));
    chargeKey.run({ keyId: reservation.keyId, charge: charged, updatedAtMs: Date.now() });
  });
}

import type Database from "better-sqlite3";
import { and, eq, inArray } from "drizzle-orm";
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
import type { SqliteDatabase } from "./open-sqlite";
import { groupCommitOf } from "./group-commit";
import { prepaidSummarySql } from "../prepaid-summary-sql";
import { prepaidKeys } from "./schema";

/**
 * The statements of prepaid calls, in SQL as PostgreSQL's functions (postgres/migrations 0002 and 0006) write them,
 * run by the driver without the query builder: a key row counts what its reservations hold (reserved_tokens), and
 * every statement that writes a reservation keeps that count.
 */
const statements = {
  /** The usual reservation: the key has room for all of it, counting reservations expired but not swept yet. */
  take: `update prepaid_keys set reserved_tokens = reserved_tokens + :tokens
    where code_hash = :codeHash and model = :model and status = 'active'
      and total_tokens - used_tokens - reserved_tokens >= max(:tokens, :inputTokens + 1)
    returning id`,
  activeKey: `select id from prepaid_keys where code_hash = :codeHash and model = :model and status = 'active'`,
  free: `select total_tokens - used_tokens - reserved_tokens from prepaid_keys where id = :keyId`,
  hold: `update prepaid_keys set reserved_tokens = reserved_tokens + :tokens where id = :keyId`,
  insert: `insert into prepaid_reservations (key_id, id, tokens, expires_at, created_at)
    values (:keyId, :id, :tokens, :expiresAt, :now)`,
  extend: `update prepaid_reservations set expires_at = :expiresAt where key_id = :keyId and id = :id`,
  end: `delete from prepaid_reservations where key_id = :keyId and id = :id returning tokens`,
  charge: `update prepaid_keys set used_tokens = used_tokens + :charge, reserved_tokens = reserved_tokens - :tokens,
      status = case when status = 'active' and used_tokens + :charge >= total_tokens then 'disabled' else status end,
      last_used_at = case when :charge > 0 then :now else last_used_at end, updated_at = :now
    where id = :keyId
    returning max(0, total_tokens - used_tokens - reserved_tokens)`,
  remaining: `select max(0, total_tokens - used_tokens - reserved_tokens) from prepaid_keys where id = :keyId`,
  balance: `select total_tokens as total, used_tokens as used, reserved_tokens as reserved
    from prepaid_keys where id = :keyId`,
  byCodeHash: `select id, code_hash as codeHash, model, total_tokens as totalTokens, used_tokens as usedTokens, status,
    limits from prepaid_keys where code_hash = :codeHash`,
  anyExpired: `select 1 from prepaid_reservations where key_id = :keyId and expires_at <= :now limit 1`,
  /** Takes what the expired reservations of the keys chosen by `which` hold off their counts; then `sweep`. */
  release: (which: string) => `update prepaid_keys set reserved_tokens = reserved_tokens - (
      select coalesce(sum(r.tokens), 0) from prepaid_reservations r where r.key_id = prepaid_keys.id and r.expires_at <= :now)
    where ${which}`,
  sweep: (which: string) => `delete from prepaid_reservations where expires_at <= :now and ${which}`,
};

/**
 * Prepaid keys on SQLite: reserving and settling are one short transaction each, of prepared statements, or, when
 * several calls reach that point in the same turn of the event loop, one savepoint each of a transaction they
 * share (group-commit.ts). SQLite runs one writer at a time, across processes too, and each transaction takes the
 * write lock as it begins (IMMEDIATE), so what it reads is what it writes against.
 */
export class SqlitePrepaidKeys implements PrepaidKeyStore {
  private readonly reserveTokens;
  private readonly settlement;
  private readonly sweepKey;
  private readonly sweepAll;
  private readonly prepared;

  constructor(
    private readonly database: SqliteDatabase,
    /** A new reservation's id; random, see schema.ts. Tests choose their own. */
    private readonly newReservationId: () => number = randomReservationId,
  ) {
    const client = database.$client;
    const prepare = (source: string) => client.prepare(source);
    const pluck = (source: string) => client.prepare(source).pluck();
    const prepared = {
      take: pluck(statements.take),
      activeKey: pluck(statements.activeKey),
      free: pluck(statements.free),
      hold: prepare(statements.hold),
      insert: prepare(statements.insert),
      extend: prepare(statements.extend),
      end: pluck(statements.end),
      charge: pluck(statements.charge),
      remaining: pluck(statements.remaining),
      balance: prepare(statements.balance),
      byCodeHash: prepare(statements.byCodeHash),
      anyExpired: pluck(statements.anyExpired),
      releaseKey: prepare(statements.release("id = :keyId")),
      sweepKey: prepare(statements.sweep("key_id = :keyId")),
      releaseAll: prepare(
        statements.release("id in (select key_id from prepaid_reservations where expires_at <= :now)"),
      ),
      sweepAll: prepare(statements.sweep("1")),
    };
    this.prepared = prepared;
    this.sweepKey = immediate(client, (keyId: number, now: number) => {
      prepared.releaseKey.run({ keyId, now });
      prepared.sweepKey.run({ keyId, now });
    });
    this.sweepAll = immediate(client, (now: number) => {
      prepared.releaseAll.run({ now });
      prepared.sweepAll.run({ now });
    });
    const group = groupCommitOf(client);
    const reserveTokens = (values: ReservationValues): { keyId: number; held: number } | undefined => {
      const tokens = values.inputTokens + values.maxOutputTokens;
      let keyId = prepared.take.get({ ...values, tokens }) as number | undefined;
      let held = tokens;
      if (keyId === undefined) {
        // Short of room: end the key's expired reservations, then take what is free, lowering the output.
        keyId = prepared.activeKey.get(values) as number | undefined;
        if (keyId === undefined) return undefined;
        prepared.releaseKey.run({ keyId, now: values.now });
        prepared.sweepKey.run({ keyId, now: values.now });
        const free = prepared.free.get({ keyId }) as number;
        if (free < values.inputTokens + 1) return undefined;
        held = values.inputTokens + Math.min(values.maxOutputTokens, free - values.inputTokens);
        prepared.hold.run({ keyId, tokens: held });
      }
      prepared.insert.run({ keyId, id: values.id, tokens: held, expiresAt: values.expiresAt, now: values.now });
      return { keyId, held };
    };
    const settle = (reservation: Reservation, usedTokens: number, now: number): number => {
      const named = { keyId: reservation.keyId, id: reservation.id };
      const held = prepared.end.get(named) as number | undefined;
      if (held === undefined) return (prepared.remaining.get(named) as number | undefined) ?? 0;
      const charge = Math.max(0, Math.min(usedTokens, held));
      return prepared.charge.get({ keyId: reservation.keyId, charge, tokens: held, now }) as number;
    };
    this.reserveTokens = (values: ReservationValues) => group.run(() => reserveTokens(values));
    this.settlement = (reservation: Reservation, usedTokens: number, now: number) =>
      group.run(() => settle(reservation, usedTokens, now));
  }

  async summary(since: Date): Promise<PrepaidSummary> {
    const statement = this.database.$client.prepare<[{ since: number }], PrepaidSummary>(
      prepaidSummarySql(":since", (sum) => sum),
    );
    return statement.get({ since: since.getTime() })!;
  }

  async issue(
    code: string,
    model: string,
    totalTokens: number,
    paymentNonce: string | undefined,
    extra?: KeyExtras,
  ): Promise<number> {
    const [row] = this.database
      .insert(prepaidKeys)
      .values(newKeyValues(code, model, totalTokens, paymentNonce, extra))
      .returning({ id: prepaidKeys.id })
      .all();
    if (!row) throw new Error("prepaid key insert returned no row");
    return row.id;
  }

  async limitsOf(keyId: number): Promise<string | null | undefined> {
    const row = this.database
      .select({ limits: prepaidKeys.limits })
      .from(prepaidKeys)
      .where(eq(prepaidKeys.id, keyId))
      .get();
    return row ? row.limits : undefined;
  }

  async voidUnpaid(id: number): Promise<void> {
    this.database
      .update(prepaidKeys)
      .set({ status: "void", updatedAt: new Date() })
      .where(and(eq(prepaidKeys.id, id), eq(prepaidKeys.status, "active"), eq(prepaidKeys.usedTokens, 0)))
      .run();
  }

  async voidBoughtWith(paymentNonce: string): Promise<boolean> {
    const voided = this.database
      .update(prepaidKeys)
      .set({ status: "void", updatedAt: new Date() })
      .where(and(eq(prepaidKeys.paymentNonce, paymentNonce), inArray(prepaidKeys.status, ["active", "disabled"])))
      .run();
    return voided.changes > 0;
  }

  async findByCode(code: string): Promise<PrepaidKey | undefined> {
    const codeHash = hashPrepaidCode(code);
    const key = this.prepared.byCodeHash.get({ codeHash }) as PrepaidKey | undefined;
    if (!key || !sameHash(key.codeHash, codeHash)) return undefined;
    return key.status === "active" || key.status === "disabled" ? key : undefined;
  }

  async balance(keyId: number, now = Date.now()): Promise<KeyBalance> {
    if (this.prepared.anyExpired.get({ keyId, now }) !== undefined) this.sweepKey(keyId, now);
    const row = this.prepared.balance.get({ keyId }) as { total: number; used: number; reserved: number } | undefined;
    if (!row) throw new Error(`no prepaid key ${keyId}`);
    return { ...row, remaining: Math.max(0, row.total - row.used - row.reserved) };
  }

  async reserve(code: string, model: string, tokens: TokenRequest, ttlMs: number): Promise<Reservation | undefined> {
    const now = Date.now();
    const values = { codeHash: hashPrepaidCode(code), model, ...tokens, now, expiresAt: now + ttlMs };
    const collided = (error: unknown) => (error as { code?: string }).code === "SQLITE_CONSTRAINT_PRIMARYKEY";
    return withReservationId(this.newReservationId, collided, async (id) => {
      const reserved = await this.reserveTokens({ ...values, id });
      return reserved && { keyId: reserved.keyId, id, allowedOutput: reserved.held - tokens.inputTokens };
    });
  }

  async extend(reservation: Reservation, ttlMs: number): Promise<void> {
    this.prepared.extend.run({ keyId: reservation.keyId, id: reservation.id, expiresAt: Date.now() + ttlMs });
  }

  async settle(reservation: Reservation, usedTokens: number): Promise<number> {
    return this.settlement(reservation, usedTokens, Date.now());
  }

  async deleteExpired(now = Date.now()): Promise<void> {
    this.sweepAll(now);
  }
}

type ReservationValues = {
  codeHash: string;
  model: string;
  inputTokens: number;
  maxOutputTokens: number;
  id: number;
  now: number;
  expiresAt: number;
};

/** `run` as one IMMEDIATE transaction (the write lock taken at its start), built once. */
function immediate<A extends unknown[], R>(client: Database.Database, run: (...args: A) => R): (...args: A) => R {
  const transaction = client.transaction(run);
  return (...args: A) => transaction.immediate(...args);
}

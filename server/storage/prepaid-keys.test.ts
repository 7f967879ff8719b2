import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import type { Engine } from "../../config/database-url";
import { newPrepaidCode } from "../prepaid/prepaid-code";
import type { PrepaidKeyStore } from "../prepaid/prepaid-key-store";
import { openStorage } from "./open-storage";
import { openPostgres } from "./postgres/open-postgres";
import { PostgresPrepaidKeys } from "./postgres/postgres-prepaid-keys";
import { openSqlite } from "./sqlite/open-sqlite";
import { SqlitePrepaidKeys } from "./sqlite/sqlite-prepaid-keys";
import type { Storage } from "./storage";
import { engines, useTestDatabases } from "../../cli/dev-stack/test-databases";

const MODEL = "vendor-a/gpt-6-luna";
const databases = useTestDatabases();

describe.each(engines)("prepaid keys on %s", (engine) => {
  const opened: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((storage) => storage.close()));
  });
  /** A storage over `url`, or over a new empty database: one per instance the test plays. */
  async function open(url?: string): Promise<Storage & { url: string }> {
    const at = url ?? (await databases.newDatabaseUrl(engine));
    const storage = await openStorage(at, { poolSize: 4 });
    opened.push(storage);
    return { ...storage, url: at };
  }
  /** The engine's store with its own reservation ids. */
  async function storeDrawing(url: string, ids: () => number): Promise<PrepaidKeyStore> {
    return storeOf(engine, url, ids, opened);
  }

  async function activeKey(store: PrepaidKeyStore, total: number) {
    const code = newPrepaidCode();
    const id = await store.issue(code, MODEL, total, undefined);
    return { id, code };
  }
  const reserve = (
    store: PrepaidKeyStore,
    code: string,
    inputTokens: number,
    maxOutputTokens: number,
    ttlMs = 60_000,
  ) => store.reserve(code, MODEL, { inputTokens, maxOutputTokens }, ttlMs);

  it("keeps a void key unusable, and finds an active key by its code only", async () => {
    const { prepaidKeys: store } = await open();
    const code = newPrepaidCode();
    await store.voidUnpaid(await store.issue(code, MODEL, 100, undefined));
    expect(await store.findByCode(code)).toBeUndefined();
    expect(await reserve(store, code, 1, 1)).toBeUndefined();
    const key = await activeKey(store, 100);
    expect((await store.findByCode(key.code))?.id).toBe(key.id);
    expect(await store.findByCode(`${key.code}x`)).toBeUndefined();
    expect(await reserve(store, `${key.code}x`, 1, 1)).toBeUndefined();
  });

  it("voids the key a payment bought, used or not, once that payment will never be settled", async () => {
    const { prepaidKeys: store } = await open();
    const code = newPrepaidCode();
    await store.issue(code, MODEL, 100, "0xunpaid-nonce");
    const reservation = (await reserve(store, code, 5, 5))!;
    await store.settle(reservation, 3);
    const other = newPrepaidCode();
    await store.issue(other, MODEL, 100, "0xpaid-nonce");
    expect(await store.voidBoughtWith("0xunpaid-nonce")).toBe(true);
    expect(await store.findByCode(code)).toBeUndefined();
    expect(await reserve(store, code, 1, 1)).toBeUndefined();
    expect(await store.voidBoughtWith("0xunpaid-nonce")).toBe(false);
    expect(await store.voidBoughtWith("0xno-such-nonce")).toBe(false);
    expect((await store.findByCode(other))?.status).toBe("active");
  });

  it("sums the keys sold since a time and the tokens outstanding on the active ones (the ledger report's)", async () => {
    const { prepaidKeys: store } = await open();
    const before = new Date(Date.now() - 1000);
    expect(await store.summary(before)).toEqual({ keysSold: 0, tokensSold: 0, activeKeys: 0, tokensOutstanding: 0 });
    const used = await activeKey(store, 100);
    const reservation = (await reserve(store, used.code, 10, 20))!;
    await store.settle(reservation, 25);
    await activeKey(store, 50);
    await store.voidUnpaid(await store.issue(newPrepaidCode(), MODEL, 70, undefined));
    const spent = await activeKey(store, 30);
    await store.settle((await reserve(store, spent.code, 10, 20))!, 30);
    expect(await store.summary(before)).toEqual({
      keysSold: 3,
      tokensSold: 180,
      activeKeys: 2,
      tokensOutstanding: 100 - 25 + 50,
    });
    // Outstanding tokens are owed whenever the key was sold.
    expect(await store.summary(new Date(Date.now() + 60_000))).toEqual({
      keysSold: 0,
      tokensSold: 0,
      activeKeys: 2,
      tokensOutstanding: 125,
    });
  });

  it("reserves only for the key's own model", async () => {
    const { prepaidKeys: store } = await open();
    const { id, code } = await activeKey(store, 100);
    const other = await store.reserve(code, "vendor-a/gpt-5.6-sol", { inputTokens: 1, maxOutputTokens: 1 }, 60_000);
    expect(other).toBeUndefined();
    expect(await reserve(store, code, 1, 1)).toMatchObject({ keyId: id, allowedOutput: 1 });
  });

  it("never reserves more than is left, counting live reservations, and lowers the output to what is left", async () => {
    const { prepaidKeys: store } = await open();
    const { id, code } = await activeKey(store, 100);
    expect((await reserve(store, code, 10, 50))?.allowedOutput).toBe(50);
    // 40 left: the input and 30 of the 50 output tokens asked for.
    expect((await reserve(store, code, 10, 50))?.allowedOutput).toBe(30);
    expect(await store.balance(id)).toEqual({ total: 100, used: 0, reserved: 100, remaining: 0 });
    expect(await reserve(store, code, 0, 1)).toBeUndefined();
  });

  it("refuses a reservation that leaves no output token, and takes one that leaves exactly one", async () => {
    const { prepaidKeys: store } = await open();
    const { id, code } = await activeKey(store, 100);
    expect(await reserve(store, code, 100, 5)).toBeUndefined();
    expect((await reserve(store, code, 99, 5))?.allowedOutput).toBe(1);
    expect((await store.balance(id)).remaining).toBe(0);
  });

  it("lets two instances over one database, reserving all at once, take only what the budget holds", async () => {
    const first = await open();
    const second = await open(first.url);
    const { id, code } = await activeKey(first.prepaidKeys, 100);
    const stores = [first.prepaidKeys, second.prepaidKeys];
    const taken = (
      await Promise.all(Array.from({ length: 30 }, (_, index) => reserve(stores[index % 2]!, code, 3, 4)))
    ).filter((reservation) => reservation !== undefined);
    // 14 reservations of 7, then 2 left: 3 input would leave no output token, so the rest are refused.
    expect(taken.map((reservation) => reservation.allowedOutput)).toEqual(Array<number>(14).fill(4));
    expect(await second.prepaidKeys.balance(id)).toEqual({ total: 100, used: 0, reserved: 98, remaining: 2 });
  });

  it("charges and reserves at once from two instances without losing a token", async () => {
    const first = await open();
    const second = await open(first.url);
    const { id, code } = await activeKey(first.prepaidKeys, 1000);
    const stores = [first.prepaidKeys, second.prepaidKeys];
    // 40 calls of 10 input + up to 15 output, each charged 10 + 5 as soon as it is reserved, half on each.
    const calls = Array.from({ length: 40 }, async (_, index) => {
      const store = stores[index % 2]!;
      const reservation = await reserve(store, code, 10, 15);
      if (reservation) await store.settle(reservation, 15);
      return reservation !== undefined;
    });
    const served = (await Promise.all(calls)).filter(Boolean).length;
    const balance = await first.prepaidKeys.balance(id);
    expect(balance.used).toBe(served * 15);
    expect(balance.reserved).toBe(0);
    expect(balance.used).toBeLessThanOrEqual(1000);
  });

  it("charges at most the reservation, releases the rest, and never charges a reservation twice", async () => {
    const first = await open();
    const second = await open(first.url);
    const store = first.prepaidKeys;
    const { id, code } = await activeKey(store, 100);
    const reservation = (await reserve(store, code, 20, 30))!;
    // Settled by two instances at once (a retried settlement): charged once.
    await Promise.all([store.settle(reservation, 80), second.prepaidKeys.settle(reservation, 80)]);
    expect(await store.balance(id)).toEqual({ total: 100, used: 50, reserved: 0, remaining: 50 });
    // Settling answers what is left; a second settlement charges nothing and says the same.
    expect(await store.settle(reservation, 50)).toBe(50);
    expect((await store.balance(id)).used).toBe(50);
    const held = (await reserve(store, code, 10, 20))!;
    const released = (await reserve(store, code, 5, 5))!;
    expect(await store.settle(released, 0)).toBe(20);
    expect(await store.settle(held, 0)).toBe(50);
    expect(await store.balance(id)).toEqual({ total: 100, used: 50, reserved: 0, remaining: 50 });
  });

  it("disables the key when the budget is spent to exactly zero", async () => {
    const { prepaidKeys: store } = await open();
    const key = await activeKey(store, 100);
    await store.settle((await reserve(store, key.code, 60, 40))!, 100);
    expect((await store.findByCode(key.code))?.status).toBe("disabled");
    expect((await store.balance(key.id)).remaining).toBe(0);
    expect(await reserve(store, key.code, 0, 1)).toBeUndefined();
  });

  it("stops counting a reservation whose process died once it expires, and extends live ones", async () => {
    const { prepaidKeys: store } = await open();
    const { id, code } = await activeKey(store, 100);
    const stale = (await reserve(store, code, 20, 50, 1))!;
    const live = (await reserve(store, code, 10, 20, 1))!;
    await store.extend(live, 60_000);
    const later = Date.now() + 10;
    expect(await store.balance(id, later)).toEqual({ total: 100, used: 0, reserved: 30, remaining: 70 });
    await store.deleteExpired(later);
    await store.settle(stale, 70); // its row is gone: nothing is charged
    expect((await store.balance(id, later)).used).toBe(0);
  });

  it("gives an expired reservation's tokens to the next one, and its late settlement then charges nothing", async () => {
    const first = await open();
    const second = await open(first.url);
    const { id, code } = await activeKey(first.prepaidKeys, 100);
    // Expired but nobody reserved since: a late settlement (a process that stalled) still charges it.
    const late = (await reserve(first.prepaidKeys, code, 10, 10, 1))!;
    await sleep(5);
    await first.prepaidKeys.settle(late, 15);
    expect(await first.prepaidKeys.balance(id)).toEqual({ total: 100, used: 15, reserved: 0, remaining: 85 });
    // Expired, then its tokens are taken by a reservation of another instance: the late settlement finds nothing.
    const stale = (await reserve(first.prepaidKeys, code, 45, 40, 1))!;
    await sleep(5);
    const next = (await reserve(second.prepaidKeys, code, 5, 100))!;
    expect(next.allowedOutput).toBe(80);
    await first.prepaidKeys.settle(stale, 85);
    await second.prepaidKeys.settle(next, 85);
    expect(await first.prepaidKeys.balance(id)).toEqual({ total: 100, used: 100, reserved: 0, remaining: 0 });
  });

  it("frees the tokens of expired reservations for a reservation that settles them at once", async () => {
    const first = await open();
    const second = await open(first.url);
    const { id, code } = await activeKey(first.prepaidKeys, 100);
    const stale = await Promise.all(Array.from({ length: 5 }, () => reserve(first.prepaidKeys, code, 10, 10, 1)));
    await sleep(5);
    // The late settlements of the expired ones race the reservations that take their tokens, on two instances.
    const [, taken] = await Promise.all([
      Promise.all(stale.map((reservation) => first.prepaidKeys.settle(reservation!, 20))),
      Promise.all(Array.from({ length: 6 }, () => reserve(second.prepaidKeys, code, 5, 15))),
    ]);
    const served = taken.filter((reservation) => reservation !== undefined);
    await Promise.all(served.map((reservation) => second.prepaidKeys.settle(reservation, 20)));
    const balance = await first.prepaidKeys.balance(id);
    expect(balance.reserved).toBe(0);
    expect(balance.used).toBeLessThanOrEqual(100);
    // Every reservation served was charged its 20, and each late settlement 20 or nothing.
    expect(balance.used % 20).toBe(0);
    expect(balance.used).toBeGreaterThanOrEqual(served.length * 20);
  });

  it("draws another id when a live reservation of the key holds the one drawn, and lets other keys reuse it", async () => {
    const { url, prepaidKeys: store } = await open();
    const ids = [7, 7, 8, 7];
    const drawing = await storeDrawing(url, () => ids.shift()!);
    const first = await activeKey(drawing, 100);
    const second = await activeKey(drawing, 100);
    expect(await reserve(drawing, first.code, 1, 1)).toMatchObject({ keyId: first.id, id: 7 });
    expect(await reserve(drawing, first.code, 1, 1)).toMatchObject({ keyId: first.id, id: 8 });
    expect(await reserve(drawing, second.code, 1, 1)).toMatchObject({ keyId: second.id, id: 7 });
    expect((await store.balance(first.id)).reserved).toBe(4);
  });
});

/** The engine's prepaid-key store over `url` with the reservation ids `ids` draws. */
async function storeOf(
  engine: Engine,
  url: string,
  ids: () => number,
  opened: { close(): Promise<void> }[],
): Promise<PrepaidKeyStore> {
  if (engine === "sqlite") {
    const database = openSqlite(url.replace(/^file:/, ""));
    opened.push({ close: async () => void database.$client.close() });
    return new SqlitePrepaidKeys(database, ids);
  }
  const database = await openPostgres(url, { poolSize: 2 });
  opened.push({ close: () => database.$client.end() });
  return new PostgresPrepaidKeys(database, ids);
}

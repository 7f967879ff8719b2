import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openDatabase, type AppDatabase } from "../storage/database";
import { newPrepaidCode } from "./prepaid-code";
import { PrepaidKeyStore } from "./prepaid-key-store";

describe("PrepaidKeyStore on a real SQLite file", () => {
  let directory: string;
  let database: AppDatabase;
  let store: PrepaidKeyStore;
  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), "paysvc-keys-"));
    database = openDatabase(`file:${join(directory, "keys.sqlite")}`);
    store = new PrepaidKeyStore(database);
  });
  afterEach(() => {
    database.$client.close();
    rmSync(directory, { recursive: true, force: true });
  });

  function activeKey(total: number) {
    const code = newPrepaidCode();
    const id = store.createPending(code, "vendor-a/gpt-6-luna", total, undefined);
    store.finishPending(id, "active");
    return { id, code };
  }

  it("keeps a pending or void key unusable, and finds an active key by its code only", () => {
    const code = newPrepaidCode();
    const id = store.createPending(code, "vendor-a/gpt-6-luna", 100, undefined);
    expect(store.findByCode(code)).toBeUndefined();
    expect(store.reserve(id, { inputTokens: 1, maxOutputTokens: 1 }, 60_000)).toBeUndefined();
    store.finishPending(id, "void");
    store.finishPending(id, "active"); // a void key never becomes active
    expect(store.findByCode(code)).toBeUndefined();
    const key = activeKey(100);
    expect(store.findByCode(key.code)?.id).toBe(key.id);
    expect(store.findByCode(`${key.code}x`)).toBeUndefined();
  });

  it("never reserves more than is left, counting live reservations, and lowers the output to what is left", () => {
    const { id } = activeKey(100);
    expect(store.reserve(id, { inputTokens: 10, maxOutputTokens: 50 }, 60_000)?.allowedOutput).toBe(50);
    // 40 left: the input and 30 of the 50 output tokens asked for.
    expect(store.reserve(id, { inputTokens: 10, maxOutputTokens: 50 }, 60_000)?.allowedOutput).toBe(30);
    expect(store.balance(id)).toEqual({ total: 100, used: 0, reserved: 100, remaining: 0 });
    expect(store.reserve(id, { inputTokens: 0, maxOutputTokens: 1 }, 60_000)).toBeUndefined();
  });

  it("refuses a reservation that leaves no output token, and takes one that leaves exactly one", () => {
    const { id } = activeKey(100);
    expect(store.reserve(id, { inputTokens: 100, maxOutputTokens: 5 }, 60_000)).toBeUndefined();
    expect(store.reserve(id, { inputTokens: 99, maxOutputTokens: 5 }, 60_000)?.allowedOutput).toBe(1);
    expect(store.balance(id).remaining).toBe(0);
  });

  it("lets two connections to the same file, as two processes have, reserve only what the budget holds", () => {
    const { id } = activeKey(100);
    const other = openDatabase(`file:${join(directory, "keys.sqlite")}`);
    try {
      const otherStore = new PrepaidKeyStore(other);
      const stores = [store, otherStore];
      const taken = Array.from({ length: 30 }, (_, index) =>
        stores[index % 2]!.reserve(id, { inputTokens: 3, maxOutputTokens: 4 }, 60_000),
      ).filter((reservation) => reservation !== undefined);
      // 14 reservations of 7, then one of the 2 left (3 input would leave no output token: refused).
      expect(taken.map((reservation) => reservation.allowedOutput)).toEqual(Array<number>(14).fill(4));
      expect(store.balance(id)).toEqual({ total: 100, used: 0, reserved: 98, remaining: 2 });
    } finally {
      other.$client.close();
    }
  });

  it("charges at most the reservation, releases the rest, and never charges a reservation twice", () => {
    const { id } = activeKey(100);
    const reservation = store.reserve(id, { inputTokens: 20, maxOutputTokens: 30 }, 60_000)!.id;
    store.settle(reservation, 80);
    expect(store.balance(id)).toEqual({ total: 100, used: 50, reserved: 0, remaining: 50 });
    store.settle(reservation, 50);
    expect(store.balance(id).used).toBe(50);
    const released = store.reserve(id, { inputTokens: 10, maxOutputTokens: 20 }, 60_000)!.id;
    store.settle(released, 0);
    expect(store.balance(id)).toEqual({ total: 100, used: 50, reserved: 0, remaining: 50 });
  });

  it("disables the key when the budget is spent to exactly zero", () => {
    const key = activeKey(100);
    store.settle(store.reserve(key.id, { inputTokens: 60, maxOutputTokens: 40 }, 60_000)!.id, 100);
    expect(store.findByCode(key.code)?.status).toBe("disabled");
    expect(store.balance(key.id).remaining).toBe(0);
    expect(store.reserve(key.id, { inputTokens: 0, maxOutputTokens: 1 }, 60_000)).toBeUndefined();
  });

  it("stops counting a reservation whose process died once it expires, and extends live ones", () => {
    const { id } = activeKey(100);
    const stale = store.reserve(id, { inputTokens: 20, maxOutputTokens: 50 }, 1)!.id;
    const live = store.reserve(id, { inputTokens: 10, maxOutputTokens: 20 }, 1)!.id;
    store.extend(live, 60_000);
    const later = Date.now() + 10;
    expect(store.balance(id, later)).toEqual({ total: 100, used: 0, reserved: 30, remaining: 70 });
    store.deleteExpired(later);
    store.settle(stale, 70); // its row is gone: nothing is charged
    expect(store.balance(id, later).used).toBe(0);
  });
});

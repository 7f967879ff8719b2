import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openDatabase, type AppDatabase } from "../storage/database";
import { newPrepaidCode } from "./prepaid-code";
import { PrepaidKeyStore } from "./prepaid-key-store";

const MODEL = "vendor-a/gpt-6-luna";

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

  function activeKey(total: number, on = store) {
    const code = newPrepaidCode();
    const id = on.issue(code, MODEL, total, undefined);
    return { id, code };
  }

  function reserve(code: string, inputTokens: number, maxOutputTokens: number, ttlMs = 60_000, on = store) {
    return on.reserve(code, MODEL, { inputTokens, maxOutputTokens }, ttlMs);
  }

  it("keeps a void key unusable, and finds an active key by its code only", () => {
    const code = newPrepaidCode();
    const id = store.issue(code, MODEL, 100, undefined);
    store.voidUnpaid(id);
    expect(store.findByCode(code)).toBeUndefined();
    expect(reserve(code, 1, 1)).toBeUndefined();
    const key = activeKey(100);
    expect(store.findByCode(key.code)?.id).toBe(key.id);
    expect(store.findByCode(`${key.code}x`)).toBeUndefined();
    expect(reserve(`${key.code}x`, 1, 1)).toBeUndefined();
  });

  it("reserves only for the key's own model", () => {
    const { id, code } = activeKey(100);
    expect(store.reserve(code, "vendor-a/gpt-5.6-sol", { inputTokens: 1, maxOutputTokens: 1 }, 60_000)).toBeUndefined();
    expect(reserve(code, 1, 1)).toMatchObject({ keyId: id, allowedOutput: 1 });
  });

  it("never reserves more than is left, counting live reservations, and lowers the output to what is left", () => {
    const { id, code } = activeKey(100);
    expect(reserve(code, 10, 50)?.allowedOutput).toBe(50);
    // 40 left: the input and 30 of the 50 output tokens asked for.
    expect(reserve(code, 10, 50)?.allowedOutput).toBe(30);
    expect(store.balance(id)).toEqual({ total: 100, used: 0, reserved: 100, remaining: 0 });
    expect(reserve(code, 0, 1)).toBeUndefined();
  });

  it("refuses a reservation that leaves no output token, and takes one that leaves exactly one", () => {
    const { id, code } = activeKey(100);
    expect(reserve(code, 100, 5)).toBeUndefined();
    expect(reserve(code, 99, 5)?.allowedOutput).toBe(1);
    expect(store.balance(id).remaining).toBe(0);
  });

  it("lets two connections to the same file, as two processes have, reserve only what the budget holds", () => {
    const { id, code } = activeKey(100);
    const other = openDatabase(`file:${join(directory, "keys.sqlite")}`);
    try {
      const otherStore = new PrepaidKeyStore(other);
      const stores = [store, otherStore];
      const taken = Array.from({ length: 30 }, (_, index) => reserve(code, 3, 4, 60_000, stores[index % 2])).filter(
        (reservation) => reservation !== undefined,
      );
      // 14 reservations of 7, then one of the 2 left (3 input would leave no output token: refused).
      expect(taken.map((reservation) => reservation.allowedOutput)).toEqual(Array<number>(14).fill(4));
      expect(store.balance(id)).toEqual({ total: 100, used: 0, reserved: 98, remaining: 2 });
    } finally {
      other.$client.close();
    }
  });

  it("charges at most the reservation, releases the rest, and never charges a reservation twice", () => {
    const { id, code } = activeKey(100);
    const reservation = reserve(code, 20, 30)!;
    store.settle(reservation, 80);
    expect(store.balance(id)).toEqual({ total: 100, used: 50, reserved: 0, remaining: 50 });
    store.settle(reservation, 50);
    expect(store.balance(id).used).toBe(50);
    const released = reserve(code, 10, 20)!;
    store.settle(released, 0);
    expect(store.balance(id)).toEqual({ total: 100, used: 50, reserved: 0, remaining: 50 });
  });

  it("disables the key when the budget is spent to exactly zero", () => {
    const key = activeKey(100);
    store.settle(reserve(key.code, 60, 40)!, 100);
    expect(store.findByCode(key.code)?.status).toBe("disabled");
    expect(store.balance(key.id).remaining).toBe(0);
    expect(reserve(key.code, 0, 1)).toBeUndefined();
  });

  it("stops counting a reservation whose process died once it expires, and extends live ones", () => {
    const { id, code } = activeKey(100);
    const stale = reserve(code, 20, 50, 1)!;
    const live = reserve(code, 10, 20, 1)!;
    store.extend(live, 60_000);
    const later = Date.now() + 10;
    expect(store.balance(id, later)).toEqual({ total: 100, used: 0, reserved: 30, remaining: 70 });
    store.deleteExpired(later);
    store.settle(stale, 70); // its row is gone: nothing is charged
    expect(store.balance(id, later).used).toBe(0);
  });

  it("draws another id when a live reservation of the key holds the one drawn, and lets other keys reuse it", () => {
    const ids = [7, 7, 8, 7];
    const drawing = new PrepaidKeyStore(database, () => ids.shift()!);
    const first = activeKey(100, drawing);
    const second = activeKey(100, drawing);
    expect(reserve(first.code, 1, 1, 60_000, drawing)).toMatchObject({ keyId: first.id, id: 7 });
    expect(reserve(first.code, 1, 1, 60_000, drawing)).toMatchObject({ keyId: first.id, id: 8 });
    expect(reserve(second.code, 1, 1, 60_000, drawing)).toMatchObject({ keyId: second.id, id: 7 });
    expect(store.balance(first.id).reserved).toBe(4);
  });
});

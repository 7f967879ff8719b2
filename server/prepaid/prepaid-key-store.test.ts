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
    expect(store.reserve(id, 1, 60_000)).toBeUndefined();
    store.finishPending(id, "void");
    store.finishPending(id, "active"); // a void key never becomes active
    expect(store.findByCode(code)).toBeUndefined();
    const key = activeKey(100);
    expect(store.findByCode(key.code)?.id).toBe(key.id);
    expect(store.findByCode(`${key.code}x`)).toBeUndefined();
  });

  it("never reserves more than is left, counting live reservations", () => {
    const { id } = activeKey(100);
    const first = store.reserve(id, 60, 60_000);
    expect(first).toBeDefined();
    expect(store.reserve(id, 41, 60_000)).toBeUndefined();
    expect(store.reserve(id, 40, 60_000)).toBeDefined();
    expect(store.balance(id)).toEqual({ total: 100, used: 0, reserved: 100, remaining: 0 });
  });

  it("charges at most the reservation, releases the rest, and never charges a reservation twice", () => {
    const { id } = activeKey(100);
    const reservation = store.reserve(id, 50, 60_000)!;
    store.settle(reservation, 80);
    expect(store.balance(id)).toEqual({ total: 100, used: 50, reserved: 0, remaining: 50 });
    store.settle(reservation, 50);
    expect(store.balance(id).used).toBe(50);
    const released = store.reserve(id, 30, 60_000)!;
    store.settle(released, 0);
    expect(store.balance(id)).toEqual({ total: 100, used: 50, reserved: 0, remaining: 50 });
  });

  it("disables the key when the budget is spent to exactly zero", () => {
    const key = activeKey(100);
    store.settle(store.reserve(key.id, 100, 60_000)!, 100);
    expect(store.findByCode(key.code)?.status).toBe("disabled");
    expect(store.balance(key.id).remaining).toBe(0);
    expect(store.reserve(key.id, 1, 60_000)).toBeUndefined();
  });

  it("stops counting a reservation whose process died once it expires, and extends live ones", () => {
    const { id } = activeKey(100);
    const stale = store.reserve(id, 70, 1)!;
    const live = store.reserve(id, 30, 1)!;
    store.extend(live, 60_000);
    const later = Date.now() + 10;
    expect(store.balance(id, later)).toEqual({ total: 100, used: 0, reserved: 30, remaining: 70 });
    store.deleteExpired(later);
    store.settle(stale, 70); // its row is gone: nothing is charged
    expect(store.balance(id, later).used).toBe(0);
  });
});

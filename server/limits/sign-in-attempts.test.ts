import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabases } from "../../cli/dev-stack/test-databases";
import { openStorage } from "../storage/open-storage";
import type { Storage } from "../storage/storage";
import { SIGN_IN_ATTEMPTS, SIGN_IN_WINDOW_SECONDS, SignInAttempts } from "./sign-in-attempts";

const databases = useTestDatabases();
let storage: Storage;
beforeAll(async () => {
  storage = await openStorage(await databases.newDatabaseUrl("sqlite"));
});
afterAll(() => storage?.close());

describe("the operator's sign-in attempts", () => {
  it(`admit ${SIGN_IN_ATTEMPTS} at once, then one each window / ${SIGN_IN_ATTEMPTS}; another /64 has its own`, async () => {
    const attempts = new SignInAttempts(() => storage.limitLog);
    const start = Date.UTC(2026, 10, 28, 12, 0, 0);
    for (let index = 0; index < SIGN_IN_ATTEMPTS; index++) {
      expect(await attempts.attempt(`2001:db8:7:7::${index + 1}`, start + index * 1000)).toEqual({ admitted: true });
    }
    // The clock stands a window ahead of the first attempt; one more has room a step (90 s) after it moves.
    const step = (SIGN_IN_WINDOW_SECONDS * 1000) / SIGN_IN_ATTEMPTS;
    const later = start + 60_000;
    expect(await attempts.attempt("2001:db8:7:7::ff", later)).toEqual({
      admitted: false,
      retryAfterSeconds: (step - 60_000) / 1000,
    });
    expect(await attempts.attempt("2001:db8:7:8::1", later)).toEqual({ admitted: true });
    expect(await attempts.attempt("2001:db8:7:7::1", start + step)).toEqual({ admitted: true });
    expect((await attempts.attempt("2001:db8:7:7::1", start + step)).admitted).toBe(false);
    // Quiet for a window: the whole burst again.
    const quiet = start + 2 * SIGN_IN_WINDOW_SECONDS * 1000;
    for (let index = 0; index < SIGN_IN_ATTEMPTS; index++) {
      expect(await attempts.attempt("2001:db8:7:7::1", quiet)).toEqual({ admitted: true });
    }
    expect((await attempts.attempt("2001:db8:7:7::1", quiet)).admitted).toBe(false);
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabases } from "../../cli/dev-stack/test-databases";
import { openStorage } from "../storage/open-storage";
import type { Storage } from "../storage/storage";
import type { SessionKind } from "./session-cookie";
import { SessionStore } from "./session-store";

const databases = useTestDatabases();
let storage: Storage;
let sessions: SessionStore;
beforeAll(async () => {
  storage = await openStorage(await databases.newDatabaseUrl("sqlite"));
  sessions = new SessionStore(() => storage.sessions);
});
afterAll(() => storage?.close());

const OPERATOR: SessionKind = { name: "test_operator", plainPath: "/operator", seconds: 8 * 3600 };
const WALLET: SessionKind = { name: "test_wallet", plainPath: "/v1/prepaid/keys", seconds: 3600 };
const KEY = "session-store-test-key-0123456789";
const WALLET_A = "0x1111111111111111111111111111111111111111";
const WALLET_B = "0x2222222222222222222222222222222222222222";
const cookie = (kind: SessionKind, value: string, prefix = "") => `other=1; ${prefix}${kind.name}=${value}; last=2`;

describe("the browser sessions", () => {
  it("are the subject, its generation and expiry, signed: read back until they expire, under their key only", async () => {
    const now = Date.UTC(2026, 10, 29, 1, 0, 0);
    const session = await sessions.open(WALLET, KEY, WALLET_A, now);
    expect(session).toMatchObject({ subject: WALLET_A, expires: now / 1000 + 3600 });
    expect(session.value).toMatch(new RegExp(`^${WALLET_A}\\.0\\.${now / 1000 + 3600}\\.[\\w-]{43}$`));
    const read = (header: string | null, at = now, key = KEY) => sessions.read(WALLET, key, header, at);
    expect(await read(cookie(WALLET, session.value))).toEqual({ subject: WALLET_A, expires: now / 1000 + 3600 });
    expect(await read(cookie(WALLET, session.value, "__Host-"))).toMatchObject({ subject: WALLET_A });
    expect(await read(cookie(WALLET, session.value), now + 3600_000)).toBeUndefined();
    expect(await read(cookie(WALLET, session.value), now, `${KEY}-other`)).toBeUndefined();
    expect(await read(null)).toBeUndefined();
    // The __Host- cookie is read first when both are sent.
    expect(await read(`${WALLET.name}=${session.value}; __Host-${WALLET.name}=stale`)).toBeUndefined();
  });

  it("refuse a value altered in any part, or one of another kind under the same key", async () => {
    const now = Date.now();
    const { value } = await sessions.open(WALLET, KEY, WALLET_A, now);
    const [subject, generation, expires, signed] = value.split(".");
    const altered = [
      `${WALLET_B}.${generation}.${expires}.${signed}`,
      `${subject}.${Number(generation) + 1}.${expires}.${signed}`,
      `${subject}.${generation}.${Number(expires) + 3600}.${signed}`,
      `${subject}.${generation}.${expires}.${"A".repeat(43)}`,
      `${subject}.${generation}.${expires}`,
    ];
    for (const forged of altered) expect(await sessions.read(WALLET, KEY, cookie(WALLET, forged), now)).toBeUndefined();
    expect(await sessions.read(OPERATOR, KEY, cookie(OPERATOR, value), now)).toBeUndefined();
  });

  it("end all of a subject's sessions on sign-out, and only for a session's holder; not another subject's", async () => {
    const first = await sessions.open(WALLET, KEY, WALLET_A);
    const second = await sessions.open(WALLET, KEY, WALLET_A);
    const other = await sessions.open(WALLET, KEY, WALLET_B);
    expect(await sessions.end(WALLET, KEY, cookie(WALLET, "forged.0.9999999999.x"))).toBe(false);
    expect(await sessions.read(WALLET, KEY, cookie(WALLET, second.value))).toBeDefined();
    expect(await sessions.end(WALLET, KEY, cookie(WALLET, first.value))).toBe(true);
    for (const ended of [first, second]) {
      expect(await sessions.read(WALLET, KEY, cookie(WALLET, ended.value))).toBeUndefined();
    }
    expect(await sessions.read(WALLET, KEY, cookie(WALLET, other.value))).toMatchObject({ subject: WALLET_B });
    // A session signed in after the sign-out is good; the ended one ends nothing more.
    const again = await sessions.open(WALLET, KEY, WALLET_A);
    expect(await sessions.end(WALLET, KEY, cookie(WALLET, first.value))).toBe(false);
    expect(await sessions.read(WALLET, KEY, cookie(WALLET, again.value))).toMatchObject({ subject: WALLET_A });
    // The operator's kind keeps its own generation.
    const operator = await sessions.open(OPERATOR, KEY, "operator");
    expect(await sessions.read(OPERATOR, KEY, cookie(OPERATOR, operator.value))).toMatchObject({ subject: "operator" });
  });
});

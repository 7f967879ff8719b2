import { createHmac, timingSafeEqual } from "node:crypto";
import { sessionValue, type SessionKind } from "./session-cookie";

/**
 * The sessions' generations, in the database every instance shares: a session names its subject's generation, and
 * ending a subject's sessions moves it on (one atomic step), which ends each of them on every instance at once.
 */
export interface SessionGenerations {
  /** The subject's current generation (0 before its first sign-out). */
  generation(subject: string): Promise<number>;
  /** Moves the subject's generation on: every session signed in before ends. The new generation. */
  endSessions(subject: string): Promise<number>;
}

/** A session read from its cookie: who it is (the operator, a wallet's address) and when it ends (Unix seconds). */
export interface Session {
  subject: string;
  expires: number;
}

/** What a subject may be written as in a cookie value: an EVM address in hex, a Solana one in base58, a name. */
const SUBJECT = /^[0-9A-Za-z]{1,64}$/;

/**
 * Every kind of browser session (the operator's, a signed-in wallet's), kept one way: a cookie value of the subject,
 * its generation and expiry, and an HMAC of them and the kind under the kind's key (the operator's is derived from
 * its token, so a new token ends every session; a wallet's is the deployment's sign-in secret), so that any instance
 * takes it and none can be forged; and the subject's generation in the database, so that signing out ends the
 * subject's sessions everywhere (the operator's, or one wallet's in every browser).
 */
export class SessionStore {
  constructor(private readonly generations: () => SessionGenerations) {}

  /** A new session of `subject`: the cookie value (session-cookie.ts writes the cookie) and its expiry. */
  async open(
    kind: SessionKind,
    key: string | Buffer,
    subject: string,
    now = Date.now(),
  ): Promise<Session & { value: string }> {
    if (!SUBJECT.test(subject)) throw new Error(`A session's subject must match ${SUBJECT}: ${subject}`);
    const generation = await this.generations().generation(generationOf(kind, subject));
    const expires = Math.floor(now / 1000) + kind.seconds;
    const value = `${subject}.${generation}.${expires}.${signature(kind, key, subject, generation, expires)}`;
    return { subject, expires, value };
  }

  /** The unexpired session of `kind` in the Cookie header, signed under `key` in its subject's current generation. */
  async read(
    kind: SessionKind,
    key: string | Buffer,
    cookieHeader: string | null,
    now = Date.now(),
  ): Promise<Session | undefined> {
    const match = /^([0-9A-Za-z]{1,64})\.(\d{1,15})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(
      sessionValue(cookieHeader, kind) ?? "",
    );
    if (!match) return undefined;
    const [subject, generation, expires] = [match[1]!, Number(match[2]), Number(match[3])];
    if (expires * 1000 <= now) return undefined;
    const expected = Buffer.from(signature(kind, key, subject, generation, expires));
    const given = Buffer.from(match[4]!);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    // Read last: a forged or expired cookie costs no query.
    if ((await this.generations().generation(generationOf(kind, subject))) !== generation) return undefined;
    return { subject, expires };
  }

  /**
   * Ends every session of the subject whose session the Cookie header carries (on every instance); without a valid
   * session nothing changes, so that anyone's request cannot sign someone out. Whether one was ended.
   */
  async end(kind: SessionKind, key: string | Buffer, cookieHeader: string | null, now = Date.now()): Promise<boolean> {
    const session = await this.read(kind, key, cookieHeader, now);
    if (!session) return false;
    await this.generations().endSessions(generationOf(kind, session.subject));
    return true;
  }
}

function generationOf(kind: SessionKind, subject: string): string {
  return `${kind.name}:${subject}`;
}

function signature(kind: SessionKind, key: string | Buffer, subject: string, generation: number, expires: number) {
  return createHmac("sha256", key).update(`${kind.name}:${subject}:${generation}:${expires}`).digest("base64url");
}

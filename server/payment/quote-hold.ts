import { createHash, randomBytes } from "node:crypto";

/**
 * Quotes held in the database, shared by every instance over it: a value is held under a key until it expires,
 * and a live value is never replaced, so of two instances quoting the same request at once both answer the one
 * value held first.
 */
export interface QuoteHoldStore {
  /** The live value held under `key`, if any. */
  find(key: string, now: number): Promise<string | undefined>;
  /** Holds `value` until `expiresAt` unless a live value is held; returns the value held either way. */
  hold(key: string, value: string, now: number, expiresAt: number): Promise<string>;
}

export interface HoldCodec<T> {
  encode(value: T): string;
  decode(text: string): T;
}

/**
 * Quotes kept for their lifetime, per resource and request body. Where a price moves (live gas), the signed
 * retry of a request must meet the very requirements it was quoted, not freshly computed ones, at whichever
 * instance the retry reaches.
 */
export class QuoteHold<T> {
  constructor(
    private readonly store: QuoteHoldStore,
    private readonly codec: HoldCodec<T>,
  ) {}

  async get(name: string, lifetimeMs: number, make: () => Promise<T>): Promise<T> {
    // Keys of one length, whatever the resource URL's.
    const key = createHash("sha256").update(name).digest("hex");
    const now = Date.now();
    const held = await this.store.find(key, now);
    if (held !== undefined) return this.codec.decode(held);
    const value = await make();
    return this.codec.decode(await this.store.hold(key, this.codec.encode(value), Date.now(), now + lifetimeMs));
  }
}

/** A held value's end for one that never expires. */
const NEVER = Date.UTC(9999, 0, 1);

/**
 * The deployment's secret called `name` (random, 256 bits): made by the first instance to start over the database
 * and held for good, read by every other, so that what one instance seals another accepts, and no other
 * deployment's.
 */
export function deploymentSecret(store: QuoteHoldStore, name: string): Promise<string> {
  return store.hold(name, randomBytes(32).toString("base64url"), Date.now(), NEVER);
}

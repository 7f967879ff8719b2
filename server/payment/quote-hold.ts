/**
 * Quotes kept for their lifetime, per resource and request body. Where a price moves (live gas), the signed
 * retry of a request must meet the very requirements it was quoted, not freshly computed ones.
 */
export class QuoteHold<T> {
  private readonly held = new Map<string, { value: T; expiresAt: number }>();

  constructor(private readonly maxEntries = 50_000) {}

  async get(key: string, lifetimeMs: number, make: () => Promise<T>): Promise<T> {
    const now = Date.now();
    const entry = this.held.get(key);
    if (entry && entry.expiresAt > now) return entry.value;
    const value = await make();
    this.held.delete(key);
    this.held.set(key, { value, expiresAt: now + lifetimeMs });
    // Oldest first: Map keeps insertion order.
    while (this.held.size > this.maxEntries) this.held.delete(this.held.keys().next().value as string);
    return value;
  }
}

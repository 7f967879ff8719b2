/**
 * How many places each caller holds at once, in this process's memory (open connections, requests to a provider):
 * taken up to `limit`, each given back once; a caller holding none is forgotten.
 */
export class CallerPlaces {
  private readonly held = new Map<string, number>();

  constructor(readonly limit: number) {}

  /** One place for `caller`, and its release (which gives it back once); undefined when it holds `limit` already. */
  take(caller: string): (() => void) | undefined {
    const count = this.held.get(caller) ?? 0;
    if (count >= this.limit) return undefined;
    this.held.set(caller, count + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.held.get(caller) ?? 1) - 1;
      if (left > 0) this.held.set(caller, left);
      else this.held.delete(caller);
    };
  }

  /** The places `caller` holds. */
  heldBy(caller: string): number {
    return this.held.get(caller) ?? 0;
  }
}

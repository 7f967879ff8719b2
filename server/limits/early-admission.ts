import type { Admission, LimitedCall, Payer, RateLimiter } from "./rate-limiter";

/** How many prepaid codes' key ids a process keeps; beyond, it starts again (the next call of each learns it). */
const CODES_KEPT = 10_000;

/** An admission asked before its payer was authorized: what it came to, its refusal kept to be thrown later. */
type Asked = { payer: Payer; admission?: Admission; refusal?: unknown };

/**
 * A prepaid call's rate-limit admission asked together with its reservation, instead of after it: a key's id is
 * known once one of its calls has reserved, so the next call of the same code asks both in the same turn (one
 * commit on SQLite, whose stores share the connection's group commit; two queries at once on PostgreSQL). The
 * reservation still decides first: a call it refuses gives its admission back, and a call over a limit releases its
 * reservation (the session's `failed`), as when the admission came after.
 */
export class EarlyAdmissions {
  private readonly keyIdByCode = new Map<string, string>();

  constructor(private readonly limits: RateLimiter) {}

  /** The admission of a call paid with `code`, asked now if the code's key is known; undefined otherwise. */
  ask(code: string | undefined, call: LimitedCall): Promise<Asked> | undefined {
    const id = code === undefined ? undefined : this.keyIdByCode.get(code);
    if (id === undefined) return undefined;
    const payer: Payer = { kind: "key", id };
    return this.limits.admit(payer, call).then(
      (admission) => ({ payer, admission }),
      (refusal: unknown) => ({ payer, refusal }),
    );
  }

  /** The code's key, as a reservation named it. */
  learn(code: string | undefined, payer: Payer | undefined): void {
    if (code === undefined || payer?.kind !== "key" || this.keyIdByCode.get(code) === payer.id) return;
    if (this.keyIdByCode.size >= CODES_KEPT) this.keyIdByCode.clear();
    this.keyIdByCode.set(code, payer.id);
  }

  /**
   * The call's admission for the payer its authorization names: the one asked early when it was for that payer
   * (its refusal thrown), else one asked now (an early one for another payer given back first).
   */
  async admitted(
    asked: Promise<Asked> | undefined,
    payer: Payer | undefined,
    call: LimitedCall,
  ): Promise<Admission | undefined> {
    const early = await asked;
    if (early && payer?.kind === "key" && early.payer.kind === "key" && early.payer.id === payer.id) {
      if (early.refusal !== undefined) throw early.refusal;
      return early.admission;
    }
    await early?.admission?.giveBack();
    return this.limits.admit(payer, call);
  }

  /** An early admission whose call was not authorized: it counts nothing. */
  async giveBack(asked: Promise<Asked> | undefined): Promise<void> {
    await (await asked)?.admission?.giveBack();
  }
}

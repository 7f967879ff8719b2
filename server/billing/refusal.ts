import type { Authorization } from "./payment-method";

/** A paid call's refusal by one of its steps (or by the facilitator's verdict): the answer to give instead. */
export class Refusal {
  constructor(readonly authorization: Extract<Authorization, { kind: "answer" }>) {}
}

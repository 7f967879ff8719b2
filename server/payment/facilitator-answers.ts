import type { SettleError, VerifyError } from "@x402/core/types";
import type { SettleResponse, VerifyResponse } from "@x402/core/types";

/** A verdict, and the facilitator that gave it (which is asked first to settle). */
export type Verdict = VerifyResponse & { facilitator: string };
/** A settlement's answer, and the facilitator whose answer it is (or whose transfer the chain showed). */
export type Settlement = SettleResponse & { facilitator: string };

/** The facilitators could not be asked (down, timed out, answered garbage): no verdict on the payment. */
export class FacilitatorUnavailableError extends Error {
  constructor(
    message: string,
    /** The facilitator last asked, where one was: the ledger row names it. */
    readonly facilitator?: string,
  ) {
    super(message);
    this.name = "FacilitatorUnavailableError";
  }
}

/** The verdict a facilitator sent with an error status (isValid: false). */
export function verdictOf(error: VerifyError): VerifyResponse {
  const { invalidReason, invalidMessage, payer } = error;
  return { isValid: false, invalidReason, invalidMessage, payer };
}

/** The refusal a facilitator sent with an error status (success: false). */
export function settlementOf(error: SettleError): SettleResponse {
  const { errorReason, errorMessage, payer, transaction, network } = error;
  return { success: false, errorReason, errorMessage, payer, transaction, network };
}

import type { Network, PaymentRequirements } from "@x402/core/types";
import type { ChainReader } from "./chain-payment";
import type { FacilitatorCallError } from "./facilitator-route";
import { FacilitatorUnavailableError, type Settlement } from "./facilitator-answers";
import type { DecodedPayment } from "./payment-signature";

/**
 * What the chain says of a payment a facilitator may have settled before failing (`doubt`): its transfer (that
 * facilitator's settlement), a refusal when it can no longer move (cancelled, failed on chain, expired), or
 * undefined when it is unused and valid, so another facilitator may settle it (its nonce moves money once, whoever
 * submits it). Unknown (thrown) when there is no chain or payment to ask, or the chain does not answer.
 */
export async function chainOutcome(
  chain: ChainReader | undefined,
  doubt: FacilitatorCallError,
  requirements: PaymentRequirements,
  payment: DecodedPayment | undefined,
  since: Date,
): Promise<Settlement | undefined> {
  const unknown = (why: string) =>
    new FacilitatorUnavailableError(`settlement outcome unknown: ${doubt.message}; ${why}`, doubt.facilitator);
  if (!chain || !payment) throw unknown("no chain to ask whether it moved");
  const found = await chain.find(payment, null, since).catch((error: unknown) => {
    throw unknown(`the chain could not be read: ${(error as Error).message}`);
  });
  const { facilitator } = doubt;
  const network = requirements.network as Network;
  if (found.state === "transferred") {
    return { success: true, transaction: found.transaction, network, payer: found.from, facilitator };
  }
  const refused = (errorReason: string) => ({ success: false, errorReason, transaction: "", network, facilitator });
  if (found.state === "void") return refused(found.reason);
  return found.expired ? refused("payment_expired") : undefined;
}

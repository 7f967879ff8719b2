import { walletOwner } from "../auth/principal";
import type { PreparedAnswer } from "../billing/payment-method";
import { ApiError } from "../core/errors";
import { logEvent } from "../core/log";
import type { RateLimiter } from "../limits/rate-limiter";
import type { OwnedKeyStore } from "./owned-keys";
import { keyView, usableKey } from "./owner-keys";
import type { PrepaidTopUp } from "./prepaid-purchase-request";

/**
 * More tokens on a key, paid like a purchase by the wallet that owns it (the payment's payer proves it). Checked
 * before the payment is taken (a key of another wallet, of another model, revoked: refused, nothing charged); the
 * tokens are added once it is taken, so none is spent before it is paid for. The answer is the key as it is then.
 */
export async function topUpKey(
  context: { ownedKeys: OwnedKeyStore; limits: RateLimiter },
  topUp: PrepaidTopUp,
  payment: { nonce: string; payer: string },
): Promise<PreparedAnswer> {
  const owner = walletOwner(payment.payer);
  const { key: id, model, tokens } = topUp;
  const key = await usableKey(
    context.ownedKeys,
    id,
    owner,
    `No usable prepaid key ${id} was bought by ${owner}: a key is topped up by the wallet that paid for it. Nothing was charged.`,
  );
  if (key.model !== model.id) {
    throw new ApiError(
      "invalid_request",
      `Key ${id} is for ${key.model}, not ${model.id}: a top-up adds tokens of the key's own model. Nothing was charged.`,
      { param: "model" },
    );
  }
  const after = { ...key, status: "active" as const, totalTokens: key.totalTokens + tokens };
  return {
    kind: "json",
    status: 200,
    body: { ...keyView(after, context.limits), added_tokens: tokens },
    onSettled: async () => {
      if (await context.ownedKeys.topUp(id, owner, model.id, tokens)) return;
      // Revoked between the check and the payment: the operator refunds it (the ledger has the payment).
      logEvent("error", "prepaid_top_up_not_applied", { key: id, owner, tokens, payment: payment.nonce });
    },
  };
}

import type { ChatModel } from "../../config/catalog/model-catalog";
import type { PrepaidKeyStore } from "./prepaid-key-store";
import type { RateLimiter } from "../limits/rate-limiter";
import type { PreparedAnswer } from "../billing/payment-method";
import { ApiError } from "../core/errors";
import { logEvent } from "../core/log";
import { newPrepaidCode } from "./prepaid-code";
import { walletOwner } from "../auth/principal";
import { describeRule, type KeyLimits } from "../limits/key-limits";

/**
 * A new prepaid key, bought with the verified `payment` (its payer owns the key). The order keeps every outcome safe: verify, write
 * the key, settle, then reveal its code in the answer. Nobody can use a key before its code is revealed, and
 * nothing is left to write once the payment is taken; a settlement that fails voids the key.
 */
export async function issuePrepaidCode(
  context: { prepaidKeys: PrepaidKeyStore; limits: RateLimiter },
  purchase: { model: ChatModel; tokens: number; limits?: KeyLimits },
  payment: { nonce: string; payer: string },
  apiBase: string,
): Promise<PreparedAnswer> {
  const code = newPrepaidCode();
  const { model, tokens } = purchase;
  let keyId: number;
  try {
    keyId = await context.prepaidKeys.issue(code, model.id, tokens, payment.nonce, {
      limits: purchase.limits,
      owner: walletOwner(payment.payer),
    });
  } catch (error) {
    logEvent("error", "prepaid_key_store_failed", { error: (error as Error).message });
    throw new ApiError("service_unavailable", "prepaid key issuer unavailable; nothing was charged");
  }
  return {
    kind: "json",
    status: 201,
    body: {
      object: "prepaid_code",
      id: keyId,
      code,
      model: model.id,
      tokens: { total: tokens, remaining: tokens },
      api_base: apiBase,
      status_url: `${apiBase}/prepaid/status`,
      limits: describeRule(context.limits.keyRuleWith(purchase.limits)),
    },
    onUnsettled: async () => {
      try {
        await context.prepaidKeys.voidUnpaid(keyId);
      } catch (error) {
        // Its code is never given out, so the key cannot be used either way.
        logEvent("error", "prepaid_key_void_failed", { keyId, error: (error as Error).message });
      }
    },
  };
}

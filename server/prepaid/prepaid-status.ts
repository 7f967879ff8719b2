import type { PrepaidKeyStore } from "./prepaid-key-store";
import type { RateLimiter } from "../limits/rate-limiter";
import { withKey } from "../auth/with-principal";
import { unknownPrepaidKey } from "./prepaid-code";
import { describeRule, parseKeyLimits } from "../limits/key-limits";
import { jsonAnswer, type ApiAnswer } from "../http/api-answer";
import type { ApiRequest } from "../http/api-request";

/** Endpoint 16: a key's state and budget, free of charge. remaining = total - used - reserved. */
export const prepaidStatus = withKey(
  async (
    context: { prepaidKeys: PrepaidKeyStore; limits: RateLimiter },
    _request: ApiRequest,
    { code },
  ): Promise<ApiAnswer> => {
    const key = await context.prepaidKeys.findByCode(code);
    if (!key) throw unknownPrepaidKey();
    const balance = await context.prepaidKeys.balance(key.id);
    const valid = key.status === "active";
    return jsonAnswer(
      {
        valid,
        reason: valid ? "active" : "disabled",
        model: key.model,
        tokens: { total: balance.total, used: balance.used, reserved: balance.reserved, remaining: balance.remaining },
        // The rate limits in force for the key: the deployment's, or lower ones its buyer asked for (null: none).
        limits: describeRule(context.limits.keyRuleWith(parseKeyLimits(key.limits))),
      },
      { headers: { "Cache-Control": "no-store" } },
    );
  },
);

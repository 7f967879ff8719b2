import { findGptModel, type GptModel } from "../../config/models";
import { prepaidApiBase, resourceUrl, type AppContext } from "../app-context";
import { ApiError } from "../errors";
import { readJsonBody } from "../http/read-json-body";
import { logEvent } from "../log";
import { runPaidRequest } from "../payment/paid-request";
import { quotePrepaidPack } from "../pricing/quote-tokens";
import { newPrepaidCode } from "./prepaid-code";
import { parsePrepaidPurchase } from "./prepaid-purchase-request";
import { type ApiAnswer } from "../http/api-answer";
import type { ApiRequest } from "../http/api-request";

/**
 * Endpoints 8 and 9: a prepaid key, paid with x402. The order keeps every outcome safe: verify, write the key,
 * settle, then reveal its code in the answer. Nobody can use a key before its code is revealed, and nothing is
 * left to write once the payment is taken; a settlement that fails voids the key.
 */
export async function purchasePrepaidCode(
  context: AppContext,
  request: ApiRequest,
  withDefaults: boolean,
): Promise<ApiAnswer> {
  const started = performance.now();
  const body = await readJsonBody(request, undefined, { optional: withDefaults });
  const purchase = parsePrepaidPurchase(body.value, withDefaults);
  const model = findGptModel(purchase.model) as GptModel;
  const quote = quotePrepaidPack(model, purchase.tokens, context.config.network);
  const apiBase = prepaidApiBase(context, request);
  return runPaidRequest(context, {
    request,
    resourceUrl: resourceUrl(context, request),
    description: `Prepaid key for ${model.id}, ${purchase.tokens} tokens`,
    amount: quote.amount,
    quote: {
      model: model.id,
      tokens: purchase.tokens,
      input_usd_per_1m: model.inputUsdPerMillion,
      tokens_usd: quote.display.input_usd,
      settlement_fee_usd: quote.display.settlement_overhead_usd,
      total_usd: quote.display.total_usd,
      amount: quote.display.amount,
      asset_decimals: quote.display.asset_decimals,
    },
    bodySha256: body.sha256,
    quoteMs: performance.now() - started,
    work: async (payment) => {
      const code = newPrepaidCode();
      let keyId: number;
      try {
        keyId = context.prepaidKeys.issue(code, model.id, purchase.tokens, payment.nonce);
      } catch (error) {
        logEvent("error", "prepaid_key_store_failed", { error: (error as Error).message });
        throw new ApiError("service_unavailable", "prepaid key issuer unavailable; nothing was charged");
      }
      return {
        kind: "json",
        status: 201,
        body: {
          object: "prepaid_code",
          code,
          model: model.id,
          tokens: { total: purchase.tokens, remaining: purchase.tokens },
          api_base: apiBase,
          status_url: `${apiBase}/prepaid/status`,
        },
        onUnsettled: () => {
          try {
            context.prepaidKeys.voidUnpaid(keyId);
          } catch (error) {
            // Its code is never given out, so the key cannot be used either way.
            logEvent("error", "prepaid_key_void_failed", { keyId, error: (error as Error).message });
          }
        },
      };
    },
  });
}

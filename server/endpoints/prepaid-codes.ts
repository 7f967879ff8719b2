import type { ChatModel, ModelCatalog } from "../../config/catalog/model-catalog";
import type { NetworkDefinition } from "../../networks";
import type { Quote } from "../pricing/quote";
import { prepaidPacks } from "../../config/prepaid-packs";
import { prepaidApiBase } from "../http/public-urls";
import { issuePrepaidCode } from "../prepaid/issue-prepaid-code";
import { defaultPackModel, purchaseRequests, topUpRequests } from "../prepaid/prepaid-purchase-request";
import { topUpKey } from "../prepaid/prepaid-top-up";
import { quotePrepaidPack } from "../pricing/quote-tokens";
import { paidEndpoint } from "../context/endpoint";

const pricing = `tokens (${prepaidPacks.minTokens} to ${prepaidPacks.maxTokens}, steps of ${prepaidPacks.stepTokens}) x the model's input rate + settlement fee`;

/**
 * The quote of `tokens` of `model`, a purchase's or a top-up's (whose display names its key first): the tokens at the
 * model's input rate and the settlement fee.
 */
function packQuote(
  model: ChatModel,
  tokens: number,
  network: NetworkDefinition,
  description: string,
  first: Record<string, unknown> = {},
): Quote {
  const { amount, display } = quotePrepaidPack(model, tokens, network);
  return {
    amount,
    display: {
      ...first,
      model: model.id,
      tokens,
      input_usd_per_1m: model.inputUsdPerMillion,
      tokens_usd: display.input_usd,
      settlement_fee_usd: display.settlement_overhead_usd,
      total_usd: display.total_usd,
      amount: display.amount,
      asset_decimals: display.asset_decimals,
    },
    description,
    model: model.id,
  };
}

/** Endpoints 8 and 9 (`withDefaults`: the body and its fields are optional): a prepaid key, paid with x402. */
function prepaidCodesEndpoint(
  catalog: ModelCatalog,
  withDefaults: boolean,
  path: string,
  docs: { operationId: string; summary: string },
) {
  const purchases = purchaseRequests(catalog);
  return paidEndpoint({
    method: "POST",
    paths: [path],
    access: ["x402"],
    body: { optional: withDefaults },
    schema: purchases.schema,
    parse: (value) => purchases.parse(value, withDefaults),
    quote: ({ model, tokens }, network) =>
      packQuote(model, tokens, network, `Prepaid key for ${model.id}, ${tokens} tokens`),
    async work(context, purchase, grant, request) {
      // x402 is this endpoint's only payment, so the grant names the verified payment the key is bought with.
      if (!grant.payment) throw new Error("a prepaid key is bought with an x402 payment");
      return issuePrepaidCode(context, purchase, grant.payment, prepaidApiBase(context.config, request));
    },
    docs: {
      ...docs,
      example: { model: defaultPackModel(catalog), tokens: prepaidPacks.defaultTokens },
      responseDescription: withDefaults
        ? "as /prepaid/codes"
        : "{object: prepaid_code, code, model, tokens: {total, remaining}, api_base, status_url}",
      successStatus: 201,
      pricing,
      bodyOptional: withDefaults,
    },
  });
}

export const prepaidCodes = (catalog: ModelCatalog) =>
  prepaidCodesEndpoint(catalog, false, "/prepaid/codes", {
    operationId: "buyPrepaidCode",
    summary: "Buy a prepaid key for one GPT model and a token budget",
  });

export const prepaidCodesWithDefaults = (catalog: ModelCatalog) =>
  prepaidCodesEndpoint(catalog, true, "/prepaid/codes/auto", {
    operationId: "buyPrepaidCodeWithDefaults",
    summary: `Buy a prepaid key; body optional (defaults ${defaultPackModel(catalog)}, ${prepaidPacks.defaultTokens} tokens)`,
  });

/** More tokens on a key, bought by the wallet that owns it, priced as a purchase of that many tokens. */
export function prepaidTopUp(catalog: ModelCatalog) {
  const topUps = topUpRequests(catalog);
  return paidEndpoint({
    method: "POST",
    paths: ["/prepaid/codes/top-up"],
    access: ["x402"],
    schema: topUps.schema,
    parse: (value) => topUps.parse(value),
    quote: ({ key, model, tokens }, network) =>
      packQuote(model, tokens, network, `${tokens} more tokens on prepaid key ${key} (${model.id})`, { key }),
    async work(context, topUp, grant) {
      if (!grant.payment) throw new Error("a top-up is paid with an x402 payment");
      return topUpKey(context, topUp, grant.payment);
    },
    docs: {
      operationId: "topUpPrepaidKey",
      summary: "More tokens on a key (body {key: id, model, tokens}), paid by the wallet that bought it",
      example: { key: 1, model: defaultPackModel(catalog), tokens: prepaidPacks.defaultTokens },
      responseDescription: "{object: prepaid_key, id, code_prefix, model, status, tokens, limits, ..., added_tokens}",
      pricing,
      errors: { 404: "not_found: no usable key of that id was bought by the paying wallet (nothing charged)" },
    },
  });
}

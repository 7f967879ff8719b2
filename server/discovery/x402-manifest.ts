import { pricingRules } from "../../config/limits";
import { decimalToAtomic } from "../core/money";
import { paymentInfo, schemesOf, type DeploymentFacts } from "./deployment-facts";
import { mppManifest, mppSentence } from "./mpp-guide";

/**
 * GET /.well-known/x402. No standard exists yet: `version`, `resources` and `instructions` are what today's
 * indexers read; `x402Version` 2 `items` add each paid resource's payment terms and input schema. Prices depend
 * on the request, so `accepts[].amount` is the minimum charge and `pricing` says how the exact quote is made.
 */
export function x402Manifest(facts: DeploymentFacts): Record<string, unknown> {
  const paid = facts.catalog.filter((endpoint) => endpoint.access === "x402");
  const payment = paymentInfo(facts);
  const minimum = decimalToAtomic(pricingRules.minimumChargeUsd, facts.network.usdc.decimals).toString();
  return {
    version: 1,
    resources: paid.map((endpoint) => `${facts.origin}${endpoint.path}`),
    instructions: `POST a request to a resource without payment to get HTTP 402 with the exact price in the PAYMENT-REQUIRED header (base64 JSON, x402 v2). Sign a USDC transfer on ${facts.network.id} for exactly accepts[0] with the exact scheme and repeat the identical request with PAYMENT-SIGNATURE.${facts.upto ? " Where a 402 also offers the upto scheme (chat and Responses, streamed or not), you may sign its amount as a maximum instead (a Permit2 authorization, @x402/evm/upto/client) and be charged only the tokens used." : ""}${facts.channels ? " Where a 402 offers batch-settlement, deposit once into a channel and pay each request with a signed voucher (@x402/evm/batch-settlement/client): no transaction per request." : ""} ${mppSentence(facts)} See ${facts.origin}/llms.txt and ${facts.origin}/openapi.json.`,
    mpp: mppManifest(facts),
    x402Version: 2,
    items: paid.map((endpoint) => ({
      resource: `${facts.origin}${endpoint.path}`,
      type: "http",
      method: endpoint.method,
      description: endpoint.summary,
      mimeType: "application/json",
      // `upto`'s extra also names the facilitator that may settle it, which each 402 gives.
      accepts: schemesOf(facts, endpoint).map((scheme) => ({
        scheme,
        network: payment.network,
        amount: minimum,
        asset: payment.asset,
        payTo: payment.payTo,
        maxTimeoutSeconds: payment.maxTimeoutSeconds,
        extra: scheme === "upto" ? { ...payment.extra, assetTransferMethod: "permit2" } : payment.extra,
      })),
      pricing: endpoint.pricing,
      input: { type: "http", method: endpoint.method, bodyType: "json", bodySchema: endpoint.requestSchema },
    })),
  };
}

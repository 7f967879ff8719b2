import type { PaymentRequired } from "@x402/core/types";
import { describe, expect, it } from "vitest";
import { bazaarExtension } from "../discovery/bazaar-extension";
import { catalogOf } from "../endpoints/endpoint-catalog";
import { defaultCatalog } from "../../config/catalog/default-catalog";
import { endpointsFor } from "../endpoints";

const endpoints = endpointsFor(defaultCatalog());
import { paymentRequiredJson } from "./payment-required-json";

const document = (extensions?: PaymentRequired["extensions"]): PaymentRequired => ({
  x402Version: 2,
  resource: { url: "http://127.0.0.1:3000/v1/chat/completions", description: "Chat", mimeType: "application/json" },
  accepts: [
    {
      scheme: "exact",
      network: "eip155:137",
      amount: "1007",
      asset: "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359",
      payTo: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
      maxTimeoutSeconds: 300,
      extra: { name: "USD Coin", version: "2" },
    },
  ],
  ...(extensions && { extensions }),
});

const catalog = catalogOf(endpoints);
const bazaarOf = (path: string) => bazaarExtension(catalog.find((endpoint) => endpoint.path === path)!)!;

describe("the JSON of a 402 document", () => {
  const bazaar = bazaarOf("/v1/chat/completions");

  const quote = { model: "vendor-a/gpt-6-luna", total_usd: "0.001007", amount: "1007" };

  it("is JSON.stringify's, with or without the bazaar extension and others before it", () => {
    expect(bazaar.bazaar).toBeDefined();
    for (const extensions of [undefined, {}, { quote }, { quote, ...bazaar }, { ...bazaar }]) {
      const written = paymentRequiredJson(document(extensions));
      expect(written).toBe(JSON.stringify(document(extensions)));
    }
  });

  it("puts the bazaar extension last, which changes no member", () => {
    expect(JSON.parse(paymentRequiredJson(document({ ...bazaar, quote })))).toEqual(document({ ...bazaar, quote }));
  });

  it("writes the same bazaar extension the same way every time, and another one as it is", () => {
    const first = paymentRequiredJson(document({ ...bazaar }));
    expect(paymentRequiredJson(document({ ...bazaar }))).toBe(first);
    const other = bazaarOf("/api/v1/images/generations");
    expect(other.bazaar).not.toBe(bazaar.bazaar);
    expect(JSON.parse(paymentRequiredJson(document({ ...other })))).toEqual(document({ ...other }));
  });

  it("writes frozen entries of accepts once, the same text as JSON.stringify, and others as they are", () => {
    const [entry] = document().accepts;
    const frozen = Object.freeze({ ...entry!, extra: Object.freeze({ ...entry!.extra }) });
    const withFrozen = { ...document({ quote }), accepts: [frozen, { ...entry!, amount: "2" }] };
    expect(paymentRequiredJson(withFrozen)).toBe(JSON.stringify(withFrozen));
    expect(paymentRequiredJson(withFrozen)).toBe(JSON.stringify(withFrozen));
    // A member without JSON is left out, as JSON.stringify leaves it.
    const sparse = { ...withFrozen, error: undefined } as PaymentRequired;
    expect(paymentRequiredJson(sparse)).toBe(JSON.stringify(sparse));
  });
});

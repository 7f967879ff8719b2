import { describe, expect, it } from "vitest";
import { getNetwork } from "../../networks";
import { defaultCatalog } from "../../config/catalog/default-catalog";
import { endpointsFor } from "./";

const endpoints = endpointsFor(defaultCatalog());
import { quoteRequest } from "./quote-request";
import { bazaarExtension } from "../discovery/bazaar-extension";
import { catalogOf } from "./endpoint-catalog";

describe("endpoint catalog", () => {
  const catalog = catalogOf(endpoints);
  const paid = catalog.filter((endpoint) => endpoint.access === "x402");

  it("gives every paid endpoint an example the service's own validation accepts and prices", async () => {
    expect(paid.length).toBe(12);
    for (const endpoint of paid) {
      expect(endpoint.example, endpoint.path).toBeDefined();
      const quote = await quoteRequest(
        endpoint.path,
        JSON.stringify(endpoint.example),
        getNetwork("eip155:137"),
        defaultCatalog(),
      );
      expect(quote.amount, endpoint.path).toBeGreaterThan(0n);
    }
  });

  it("gives every paid endpoint a valid bazaar discovery extension", () => {
    for (const endpoint of paid) expect(bazaarExtension(endpoint), endpoint.path).toBeDefined();
  });

  it("describes an alias as one, after the path it stands for", () => {
    const paths = catalog.map((endpoint) => `${endpoint.method} ${endpoint.path}`);
    expect(paths.slice(0, 4)).toEqual([
      "POST /v1/chat/completions",
      "POST /api/v1/chat/completions",
      "POST /v1/responses",
      "POST /api/v1/responses",
    ]);
    expect(catalog[1]).toMatchObject({
      operationId: "createChatCompletionAlias",
      summary: "Alias of /v1/chat/completions",
    });
  });
});

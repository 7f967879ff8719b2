import { describe, expect, it } from "vitest";
import { getNetwork } from "../../networks";
import { quoteRequest } from "../pricing/quote-request";
import { bazaarExtension } from "./bazaar-extension";
import { endpointCatalog } from "./endpoint-catalog";

describe("endpoint catalog", () => {
  const paid = endpointCatalog().filter((endpoint) => endpoint.access === "x402");

  it("gives every paid endpoint an example the service's own validation accepts and prices", () => {
    for (const endpoint of paid) {
      expect(endpoint.example, endpoint.path).toBeDefined();
      expect(
        quoteRequest(endpoint.path, endpoint.example, getNetwork("eip155:137")).amount,
        endpoint.path,
      ).toBeGreaterThan(0n);
    }
  });

  it("gives every paid endpoint a valid bazaar discovery extension", () => {
    for (const endpoint of paid) expect(bazaarExtension(endpoint.path), endpoint.path).toBeDefined();
  });
});

import {
  declareDiscoveryExtension,
  validateDiscoveryExtension,
  type DiscoveryExtension,
} from "@x402/extensions/bazaar";
import { logEvent } from "../core/log";
import type { CatalogEndpoint } from "./catalog-endpoint";

/**
 * The official `bazaar` discovery extension (input and output schema) of a paid endpoint, for its 402 challenges;
 * undefined for one without a request schema, or when the extension would not validate.
 */
export function bazaarExtension(endpoint: CatalogEndpoint): Record<string, DiscoveryExtension> | undefined {
  if (endpoint.access !== "x402" || !endpoint.requestSchema) return undefined;
  const declared = declareDiscoveryExtension({
    bodyType: "json",
    input: endpoint.example,
    inputSchema: endpoint.requestSchema,
    output: { schema: { type: "object", description: endpoint.responseDescription } },
  });
  const bazaar = declared.bazaar;
  if (!bazaar) return undefined;
  // The method is normally filled in from the HTTP route by the bazaar server extension; ours is known here.
  (bazaar.info.input as { method?: string }).method = endpoint.method;
  const validation = validateDiscoveryExtension(bazaar);
  if (!validation.valid) {
    logEvent("warn", "bazaar_extension_invalid", { path: endpoint.path, errors: validation.errors });
    return undefined;
  }
  return { bazaar };
}

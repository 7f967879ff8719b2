import {
  declareDiscoveryExtension,
  validateDiscoveryExtension,
  type DiscoveryExtension,
} from "@x402/extensions/bazaar";
import { logEvent } from "../log";
import { endpointCatalog } from "./endpoint-catalog";

const byPath = new Map<string, Record<string, DiscoveryExtension> | undefined>();

function build(pathname: string): Record<string, DiscoveryExtension> | undefined {
  const endpoint = endpointCatalog().find((candidate) => candidate.path === pathname && candidate.access === "x402");
  if (!endpoint?.requestSchema) return undefined;
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
    logEvent("warn", "bazaar_extension_invalid", { path: pathname, errors: validation.errors });
    return undefined;
  }
  return { bazaar };
}

/** The official `bazaar` discovery extension (input and output schema) of a paid path, for its 402 challenges. */
export function bazaarExtension(pathname: string): Record<string, DiscoveryExtension> | undefined {
  if (!byPath.has(pathname)) byPath.set(pathname, build(pathname));
  return byPath.get(pathname);
}

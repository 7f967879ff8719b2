import type { ModelCatalog } from "../../config/catalog/model-catalog";
import type { NetworkDefinition } from "../../networks";
import { readJsonBody } from "../http/read-json-body";
import type { Quote } from "../pricing/quote";
import type { PaidEndpoint } from "../context/endpoint";
import { endpointsFor } from "./index";

const paidEndpoints = (catalog: ModelCatalog) =>
  endpointsFor(catalog).filter((endpoint): endpoint is PaidEndpoint => endpoint.kind === "paid");

/** Every path a paid endpoint answers at, aliases included (the same for every catalog). */
export function quotablePaths(catalog: ModelCatalog): string[] {
  return paidEndpoints(catalog).flatMap((endpoint) => [...endpoint.paths]);
}

/**
 * The price a paid endpoint quotes for a body, offline, by the very steps the service takes before its 402: the
 * body read with the endpoint's limits, parsed and quoted by its definition (live settlement gas, where a network
 * has it, is not included), with the catalog's prices. Throws the service's refusal (an ApiError) for a body the service refuses.
 * `body` is the raw request body; undefined or empty is no body.
 */
export async function quoteRequest(
  path: string,
  body: string | undefined,
  network: NetworkDefinition,
  catalog: ModelCatalog,
): Promise<Quote> {
  const endpoint = paidEndpoints(catalog).find((candidate) => candidate.paths.includes(path));
  if (!endpoint) {
    throw new Error(`${path} is not a paid endpoint; paid endpoints: ${quotablePaths(catalog).join(", ")}`);
  }
  const bytes = Buffer.from(body ?? "", "utf8");
  const json = await readJsonBody(
    {
      method: "POST",
      url: `http://quote.invalid${path}`,
      headers: { get: (name) => (name === "content-length" ? String(bytes.byteLength) : null) },
      body: null,
      bodyBytes: bytes,
    },
    endpoint.body?.maxBytes,
    { optional: endpoint.body?.optional },
  );
  return endpoint.quote(endpoint.parse(json.value), network);
}

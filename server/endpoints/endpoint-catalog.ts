import { z } from "zod";
import type { Endpoint } from "../context/endpoint";
import type { CatalogAccess, CatalogEndpoint } from "../discovery/catalog-endpoint";

function jsonSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<
    string,
    unknown
  >;
  return rest;
}

function accessOf(endpoint: Endpoint): CatalogAccess {
  if (endpoint.kind === "paid") return "x402";
  return endpoint.access[0] === "prepaid" ? "prepaid-bearer" : "free";
}

/**
 * The discovery view of the endpoint list: each path its own entry, an alias described as one. The OpenAPI
 * document, the manifest, the guides and the 402's bazaar extension are built from it.
 */
export function catalogOf(endpoints: readonly Endpoint[]): CatalogEndpoint[] {
  return endpoints.flatMap((endpoint): CatalogEndpoint[] => {
    if (endpoint.docs.listed === false) return [];
    const { docs } = endpoint;
    const base = {
      method: endpoint.method,
      access: accessOf(endpoint),
      requestSchema: endpoint.schema ? jsonSchema(endpoint.schema) : undefined,
      example: docs.example,
      bodyOptional: docs.bodyOptional === true,
      successStatus: docs.successStatus ?? 200,
      pricing: docs.pricing,
      ...(endpoint.kind === "paid" && {
        schemes: [
          "exact" as const,
          ...(endpoint.billedInTokens ? (["upto"] as const) : []),
          ...(endpoint.channels ? (["batch-settlement"] as const) : []),
        ],
      }),
      streaming: docs.streaming,
      errors: docs.errors ?? {},
    };
    const [path, ...aliases] = endpoint.paths;
    return [
      {
        ...base,
        path,
        operationId: docs.operationId,
        summary: docs.summary,
        responseDescription: docs.responseDescription,
      },
      ...aliases.map((alias) => ({
        ...base,
        path: alias,
        operationId: `${docs.operationId}Alias`,
        summary: `Alias of ${path}`,
        responseDescription: `as ${path}`,
      })),
    ];
  });
}

import type { ServiceConfig } from "../../config/service-config";
import type { PaymentMethods } from "../billing/payment-methods";
import type { CatalogEndpoint } from "./catalog-endpoint";
import { prepaidApiBase, publicOrigin } from "../http/public-urls";
import { aiAgentsMd, llmsTxt } from "./agent-guides";
import type { DeploymentFacts } from "./deployment-facts";
import { openApiDocument } from "./openapi-document";
import { x402Manifest } from "./x402-manifest";
import { textAnswer, type ApiAnswer } from "../http/api-answer";
import type { ApiRequest } from "../http/api-request";

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

/** What the documents are written from: the configuration, the endpoints, the payment methods offered. */
interface DocumentsContext {
  config: ServiceConfig;
  catalog: readonly CatalogEndpoint[];
  payments: PaymentMethods;
}

/** Every discovery document by the path it is served at; the CLI writes the same bytes to files of these names. */
export const discoveryDocuments = {
  "openapi.json": { contentType: "application/json", render: (facts: DeploymentFacts) => json(openApiDocument(facts)) },
  ".well-known/x402": {
    contentType: "application/json",
    render: (facts: DeploymentFacts) => json(x402Manifest(facts)),
  },
  "llms.txt": { contentType: "text/plain; charset=utf-8", render: llmsTxt },
  "AI-AGENTS.md": { contentType: "text/markdown; charset=utf-8", render: aiAgentsMd },
} as const;

export type DiscoveryDocumentName = keyof typeof discoveryDocuments;

export function deploymentFacts(context: DocumentsContext, request: ApiRequest): DeploymentFacts {
  return {
    origin: publicOrigin(context.config, request),
    network: context.config.network,
    payTo: context.config.payTo,
    prepaidApiBase: prepaidApiBase(context.config, request),
    paymentTimeoutSeconds: context.config.paymentTimeoutSeconds,
    catalog: context.catalog,
    models: context.config.catalog,
    upto: context.config.upto && context.config.network.kind === "evm",
    channels: context.config.channels !== undefined && context.config.network.kind === "evm",
    mpp: context.payments.methods.some((method) => method.name === "mpp"),
  };
}

/** The served form of a discovery document. */
export function serveDiscoveryDocument(
  context: DocumentsContext,
  request: ApiRequest,
  name: DiscoveryDocumentName,
): ApiAnswer {
  const document = discoveryDocuments[name];
  // Without PUBLIC_BASE_URL the documents name the origin the request's Host header gave: a shared cache must key
  // them by it, or one caller's Host would be served to everyone.
  const headers: Record<string, string> = { "Cache-Control": "public, max-age=300" };
  if (!context.config.publicBaseUrl) headers.Vary = "Host";
  return textAnswer(document.render(deploymentFacts(context, request)), document.contentType, { headers });
}

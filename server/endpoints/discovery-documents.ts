import { serveDiscoveryDocument, type DiscoveryDocumentName } from "../discovery/discovery-documents";
import { freeEndpoint, type EndpointDocs } from "../context/endpoint";

function documentEndpoint(name: DiscoveryDocumentName, docs: EndpointDocs) {
  return freeEndpoint({
    method: "GET",
    paths: [`/${name}`],
    access: ["free"],
    uses: ["config", "catalog", "payments"],
    handle: (context, request) => serveDiscoveryDocument(context, request, name),
    docs,
  });
}

/** Endpoint 14. */
export const x402ManifestEndpoint = documentEndpoint(".well-known/x402", {
  operationId: "getX402Manifest",
  summary: "x402 discovery manifest",
  responseDescription: "discovery document",
});

export const openApiEndpoint = documentEndpoint("openapi.json", {
  operationId: "getOpenApi",
  summary: "OpenAPI 3.1 description of this deployment",
  responseDescription: "OpenAPI document",
  listed: false,
});

export const llmsTxtEndpoint = documentEndpoint("llms.txt", {
  operationId: "getLlmsTxt",
  summary: "llms.txt: the service in brief, for language models",
  responseDescription: "text/plain",
  listed: false,
});

export const aiAgentsEndpoint = documentEndpoint("AI-AGENTS.md", {
  operationId: "getAiAgentsGuide",
  summary: "AI-AGENTS.md: the full guide for agents, with a client example",
  responseDescription: "text/markdown",
  listed: false,
});

import type { ModelCatalog } from "../../config/catalog/model-catalog";
import { freeChat } from "../../config/free-tier";
import { createEmbeddings } from "../embeddings/create-embeddings";
import { embeddingsSchema } from "../embeddings/embeddings-request";
import { createFreeChatCompletion, freeChatQuota } from "../free-tier/create-free-chat-completion";
import { freeChatRequests } from "../free-tier/free-chat-request";
import { refundChannel } from "../channels/channel-refund";
import { healthResponse } from "../health/check-health";
import { jsonAnswer } from "../http/api-answer";
import { serveMetrics } from "../metrics/serve-metrics";
import { listModels } from "../models/list-models";
import { prepaidStatus } from "../prepaid/prepaid-status";
import { freeEndpoint } from "../context/endpoint";

/** Endpoint 10. */
export const embeddingsEndpoint = (catalog: ModelCatalog) =>
  freeEndpoint({
    method: "POST",
    paths: ["/v1/embeddings"],
    access: ["free"],
    schema: embeddingsSchema,
    uses: ["clientAddresses", "config", "freeEmbeddingsWindows", "providers"],
    handle: createEmbeddings,
    docs: {
      operationId: "createEmbeddings",
      summary: `Embeddings with ${catalog.embeddings.id} (free)`,
      responseDescription: "{object: list, data: [{object: embedding, index, embedding}], model, usage}",
    },
  });

/** Endpoint 11. */
export function freeChatCompletions(catalog: ModelCatalog) {
  const requests = freeChatRequests(catalog.freeChat.id);
  return freeEndpoint({
    method: "POST",
    paths: ["/v1/free/chat/completions"],
    access: ["free"],
    schema: requests.schema,
    uses: ["clientAddresses", "config", "freeChatWindows", "providers"],
    handle: (context, request) => createFreeChatCompletion(context, request, requests.parse),
    docs: {
      operationId: "createFreeChatCompletion",
      summary: `Free chat with ${catalog.freeChat.id}: 10 requests per 10 minutes and 100 per day per caller, max_tokens at most ${freeChat.maxTokens}, input at most ${freeChat.maxInputTokens} tokens`,
      responseDescription: "chat.completion, or an event stream",
      streaming: true,
      errors: { 429: "free_tier_exhausted, with Retry-After" },
    },
  });
}

/** Endpoint 12. */
export const freeChatQuotaEndpoint = freeEndpoint({
  method: "GET",
  paths: ["/v1/free/chat/completions/quota"],
  access: ["free"],
  uses: ["clientAddresses", "config", "freeChatWindows"],
  handle: freeChatQuota,
  docs: {
    operationId: "getFreeQuota",
    summary: "The caller's free chat usage",
    responseDescription: "{object: free_quota, model, per10Min: {limit, used}, perDay: {limit, used}}",
  },
});

/** A payer's way out of a batch-settlement channel, where the deployment offers channels (404 otherwise). */
export const channelRefundEndpoint = freeEndpoint({
  method: "GET",
  paths: ["/v1/channels/refund"],
  access: ["free"],
  uses: ["config", "gateway", "storage", "writes", "metrics", "channels"],
  handle: refundChannel,
  docs: {
    operationId: "refundChannel",
    summary: "Refund what a batch-settlement channel holds beyond its charges (the official client's refund(url))",
    responseDescription: "{object: channel.refund, channel, payer, refunded, transaction}, with PAYMENT-RESPONSE",
    errors: {
      402: "without a refund: the channel terms in PAYMENT-REQUIRED; a refund the scheme refuses: its reason code",
      404: "not_found: the deployment offers no channels",
    },
  },
});

/** Endpoint 16, at the prepaid API base. */
export const prepaidStatusEndpoint = freeEndpoint({
  method: "GET",
  paths: ["/v1/prepaid/status"],
  access: ["prepaid"],
  uses: ["prepaidKeys", "limits"],
  handle: prepaidStatus,
  docs: {
    operationId: "getPrepaidStatus",
    summary: "A prepaid key's state and budget (Authorization: Bearer <key>)",
    responseDescription: "{valid, reason, model, tokens: {total, used, reserved, remaining}}",
  },
});

/** Endpoint 13. */
export const modelsEndpoint = freeEndpoint({
  method: "GET",
  paths: ["/v1/models"],
  access: ["free"],
  uses: ["config"],
  handle: (context) => jsonAnswer(listModels(context.config.catalog, context.config.network)),
  docs: {
    operationId: "listModels",
    summary: "Models and live prices",
    responseDescription: "{object: list, data: [...]}",
  },
});

/** Endpoint 15. */
export const healthEndpoint = freeEndpoint({
  method: "GET",
  paths: ["/health"],
  access: ["free"],
  uses: ["providers", "storage", "gateway", "config", "writes"],
  handle: healthResponse,
  docs: {
    operationId: "getHealth",
    summary: "Service status",
    responseDescription: "{status, network, version, checks}",
  },
});

/** For operators, not callers: served only when METRICS_TOKEN is configured, and left out of the catalog. */
export const metricsEndpoint = freeEndpoint({
  method: "GET",
  paths: ["/metrics"],
  access: ["free"],
  uses: ["config", "metrics"],
  handle: serveMetrics,
  docs: {
    operationId: "getMetrics",
    summary: "Prometheus metrics (Authorization: Bearer <METRICS_TOKEN>; 404 when none is configured)",
    responseDescription: "Prometheus text format",
    listed: false,
    errors: { 401: "invalid_api_key: no or another bearer token", 404: "not_found: METRICS_TOKEN is not configured" },
  },
});

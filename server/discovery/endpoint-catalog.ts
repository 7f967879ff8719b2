import { z } from "zod";
import { decisionModel } from "../../config/decision-model";
import { embeddings, freeChat } from "../../config/free-tier";
import { imageModels } from "../../config/image-models";
import { chatLimits, pricingRules } from "../../config/limits";
import { gptModels } from "../../config/models";
import { prepaidPacks } from "../../config/prepaid-packs";
import { chatRequestSchema } from "../chat/chat-request";
import { decisionRequestSchema } from "../decisions/decision-request";
import { embeddingsSchema } from "../embeddings/embeddings-request";
import { freeChatSchema } from "../free-tier/create-free-chat-completion";
import { imageRequestSchema } from "../images/image-request";
import { purchaseSchema } from "../prepaid/prepaid-purchase-request";
import { responsesRequestSchema } from "../responses/responses-request";

export type Access = "x402" | "free" | "prepaid-bearer";

export interface CatalogEndpoint {
  method: "GET" | "POST";
  path: string;
  operationId: string;
  summary: string;
  access: Access;
  /** JSON Schema of the request body, derived from the validation schema. */
  requestSchema?: Record<string, unknown>;
  /** A valid request body. */
  example?: Record<string, unknown>;
  successStatus: 200 | 201;
  responseDescription: string;
  /** How the price is computed, in words (paid endpoints). */
  pricing?: string;
  streaming?: boolean;
}

function jsonSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<
    string,
    unknown
  >;
  return rest;
}

const rates = gptModels
  .map((model) => `${model.id} ${model.inputUsdPerMillion}/${model.outputUsdPerMillion}`)
  .join(", ");
const tokenPricing = (capField: string) =>
  `input tokens (o200k_base) x input rate + ${capField} (default ${chatLimits.defaultMaxTokens}, at most ${chatLimits.maxOutputTokens}) x output rate + settlement overhead, at least ${pricingRules.minimumChargeUsd} USD; USD per 1M tokens input/output: ${rates}`;

const chatExample = { model: "vendor-a/gpt-6-luna", messages: [{ role: "user", content: "Hello" }], max_tokens: 256 };
const responsesExample = { model: "vendor-a/gpt-6-luna", input: "Hello", max_output_tokens: 256 };
const imageExample = { model: "gpt-image-2", size: "1024x1024", prompt: "A lighthouse at dusk", n: 1 };
const ONE_PIXEL_PNG =
  "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";
const decisionExample = {
  model: decisionModel.id,
  state: "A customer asks to return shoes bought 40 days ago; the policy allows 30 days.",
  questions: { eligible: { type: "choice", instructions: "Is the return eligible? One of: yes, no" } },
};
const packExample = { model: prepaidPacks.defaultModel, tokens: prepaidPacks.defaultTokens };

/** Every endpoint of the service, described once; the OpenAPI document, manifest and guides are built from it. */
export function endpointCatalog(): CatalogEndpoint[] {
  const chat = jsonSchema(chatRequestSchema);
  const responses = jsonSchema(responsesRequestSchema);
  const images = jsonSchema(imageRequestSchema);
  const imagePricing = `listed price per image x n (1 to 4) + settlement overhead: ${imageModels.map((model) => `${model.id} ${model.size} ${model.usdPerImage}`).join(", ")}`;
  const purchase = jsonSchema(purchaseSchema);
  const packPricing = `tokens (${prepaidPacks.minTokens} to ${prepaidPacks.maxTokens}, steps of ${prepaidPacks.stepTokens}) x the model's input rate + settlement fee`;
  return [
    {
      method: "POST",
      path: "/v1/chat/completions",
      operationId: "createChatCompletion",
      example: chatExample,
      summary: "Chat completion (paid per request; prepaid key accepted)",
      access: "x402",
      requestSchema: chat,
      successStatus: 200,
      responseDescription:
        "chat.completion, or a text/event-stream of chat.completion.chunk events ending with data: [DONE]",
      pricing: tokenPricing("max_tokens"),
      streaming: true,
    },
    {
      method: "POST",
      path: "/api/v1/chat/completions",
      operationId: "createChatCompletionAlias",
      example: chatExample,
      summary: "Alias of /v1/chat/completions",
      access: "x402",
      requestSchema: chat,
      successStatus: 200,
      responseDescription: "as /v1/chat/completions",
      pricing: tokenPricing("max_tokens"),
      streaming: true,
    },
    {
      method: "POST",
      path: "/v1/responses",
      operationId: "createResponse",
      example: responsesExample,
      summary: "Responses API, alpha (paid per request; prepaid key accepted)",
      access: "x402",
      requestSchema: responses,
      successStatus: 200,
      responseDescription: "response object, or a text/event-stream of Responses events ending with data: [DONE]",
      pricing: tokenPricing("max_output_tokens"),
      streaming: true,
    },
    {
      method: "POST",
      path: "/api/v1/responses",
      operationId: "createResponseAlias",
      example: responsesExample,
      summary: "Alias of /v1/responses",
      access: "x402",
      requestSchema: responses,
      successStatus: 200,
      responseDescription: "as /v1/responses",
      pricing: tokenPricing("max_output_tokens"),
      streaming: true,
    },
    {
      method: "POST",
      path: "/api/v1/images/generations",
      operationId: "generateImages",
      example: imageExample,
      summary: "Image generation",
      access: "x402",
      requestSchema: images,
      successStatus: 200,
      responseDescription: "{created, data: [{b64_json} | {url}]}",
      pricing: imagePricing,
    },
    {
      method: "POST",
      path: "/api/v1/images/image2image",
      operationId: "editImages",
      example: { ...imageExample, image: ONE_PIXEL_PNG },
      summary: "Image editing (image: base64 data URI of a PNG, JPEG or WebP, at most 10 MB)",
      access: "x402",
      requestSchema: images,
      successStatus: 200,
      responseDescription: "{created, data: [{b64_json} | {url}]}",
      pricing: imagePricing,
    },
    {
      method: "POST",
      path: "/jev",
      operationId: "createDecision",
      example: decisionExample,
      summary: `Structured decisions with ${decisionModel.id}`,
      access: "x402",
      requestSchema: jsonSchema(decisionRequestSchema),
      successStatus: 200,
      responseDescription:
        "{model, answers: {name: {type, noul: number | choice: string | score: 0..1}}, usage: {input_tokens, output_tokens}}",
      pricing: `input tokens (state and questions) x ${decisionModel.inputUsdPerMillion} USD per 1M + settlement overhead, at least ${pricingRules.minimumChargeUsd} USD; output free`,
    },
    {
      method: "POST",
      path: "/prepaid/codes",
      operationId: "buyPrepaidCode",
      example: packExample,
      summary: "Buy a prepaid key for one GPT model and a token budget",
      access: "x402",
      requestSchema: purchase,
      successStatus: 201,
      responseDescription: "{object: prepaid_code, code, model, tokens: {total, remaining}, api_base, status_url}",
      pricing: packPricing,
    },
    {
      method: "POST",
      path: "/prepaid/codes/auto",
      operationId: "buyPrepaidCodeWithDefaults",
      example: packExample,
      summary: `Buy a prepaid key; body optional (defaults ${prepaidPacks.defaultModel}, ${prepaidPacks.defaultTokens} tokens)`,
      access: "x402",
      requestSchema: purchase,
      successStatus: 201,
      responseDescription: "as /prepaid/codes",
      pricing: packPricing,
    },
    {
      method: "POST",
      path: "/v1/embeddings",
      operationId: "createEmbeddings",
      summary: `Embeddings with ${embeddings.model} (free)`,
      access: "free",
      requestSchema: jsonSchema(embeddingsSchema),
      successStatus: 200,
      responseDescription: "{object: list, data: [{object: embedding, index, embedding}], model, usage}",
    },
    {
      method: "POST",
      path: "/v1/free/chat/completions",
      operationId: "createFreeChatCompletion",
      summary: `Free chat with ${freeChat.model}: 10 requests per 10 minutes and 100 per day per caller, max_tokens at most ${freeChat.maxTokens}, input at most ${freeChat.maxInputTokens} tokens`,
      access: "free",
      requestSchema: jsonSchema(freeChatSchema),
      successStatus: 200,
      responseDescription: "chat.completion, or an event stream",
      streaming: true,
    },
    {
      method: "GET",
      path: "/v1/free/chat/completions/quota",
      operationId: "getFreeQuota",
      summary: "The caller's free chat usage",
      access: "free",
      successStatus: 200,
      responseDescription: "{object: free_quota, model, per10Min: {limit, used}, perDay: {limit, used}}",
    },
    {
      method: "GET",
      path: "/v1/prepaid/status",
      operationId: "getPrepaidStatus",
      summary: "A prepaid key's state and budget (Authorization: Bearer <key>)",
      access: "prepaid-bearer",
      successStatus: 200,
      responseDescription: "{valid, reason, model, tokens: {total, used, reserved, remaining}}",
    },
    {
      method: "GET",
      path: "/v1/models",
      operationId: "listModels",
      summary: "Models and live prices",
      access: "free",
      successStatus: 200,
      responseDescription: "{object: list, data: [...]}",
    },
    {
      method: "GET",
      path: "/.well-known/x402",
      operationId: "getX402Manifest",
      summary: "x402 discovery manifest",
      access: "free",
      successStatus: 200,
      responseDescription: "discovery document",
    },
    {
      method: "GET",
      path: "/health",
      operationId: "getHealth",
      summary: "Service status",
      access: "free",
      successStatus: 200,
      responseDescription: "{status, network, version, checks}",
    },
  ];
}

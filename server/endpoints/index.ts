import { chatCompletions } from "./chat-completions";
import { decisions } from "./decisions";
import { aiAgentsEndpoint, llmsTxtEndpoint, openApiEndpoint, x402ManifestEndpoint } from "./discovery-documents";
import type { Endpoint } from "./endpoint";
import {
  embeddingsEndpoint,
  freeChatCompletions,
  freeChatQuotaEndpoint,
  healthEndpoint,
  metricsEndpoint,
  modelsEndpoint,
  prepaidStatusEndpoint,
} from "./free-endpoints";
import { imageEdits, imageGenerations } from "./images";
import { prepaidCodes, prepaidCodesWithDefaults } from "./prepaid-codes";
import { responses } from "./responses";

/**
 * Every endpoint of the service, in the order the documents list them: the one place an endpoint is declared.
 * Routing, the route files, the discovery documents, `paysvc quote` and the README's table derive from it.
 */
export const endpoints: readonly Endpoint[] = [
  chatCompletions,
  responses,
  imageGenerations,
  imageEdits,
  decisions,
  prepaidCodes,
  prepaidCodesWithDefaults,
  embeddingsEndpoint,
  freeChatCompletions,
  freeChatQuotaEndpoint,
  prepaidStatusEndpoint,
  modelsEndpoint,
  x402ManifestEndpoint,
  healthEndpoint,
  openApiEndpoint,
  llmsTxtEndpoint,
  aiAgentsEndpoint,
  metricsEndpoint,
];

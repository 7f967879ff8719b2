import type { ModelCatalog } from "../../config/catalog/model-catalog";
import { chatDialect } from "../dialects/chat-dialect";
import { dialectEndpoint } from "../dialects/dialect-endpoint";
import { responsesDialect } from "../responses/responses-dialect";
import { messagesCountTokensEndpoint } from "../messages/count-tokens-endpoint";
import { messagesDialect } from "../messages/messages-dialect";
import { decisions } from "./decisions";
import { aiAgentsEndpoint, llmsTxtEndpoint, openApiEndpoint, x402ManifestEndpoint } from "./discovery-documents";
import type { Endpoint } from "../context/endpoint";
import {
  channelRefundEndpoint,
  embeddingsEndpoint,
  freeChatCompletions,
  freeChatQuotaEndpoint,
  healthEndpoint,
  metricsEndpoint,
  modelsEndpoint,
  prepaidStatusEndpoint,
} from "./free-endpoints";
import { imageEdits, imageGenerations } from "./images";
import { prepaidCodes, prepaidCodesWithDefaults, prepaidTopUp } from "./prepaid-codes";
import {
  keyLimitsEndpoint,
  ownedKeysEndpoint,
  ownerSignInEndpoint,
  ownerSignOutEndpoint,
  revokeKeyEndpoint,
  rotateKeyEndpoint,
} from "./owner-key-endpoints";

/**
 * Every endpoint of the service over the catalog in force, in the order the documents list them: the one place an
 * endpoint is declared. Routing, the route files, the discovery documents, `paysvc quote` and docs/api.md's list
 * derive from it.
 */
export function endpointsFor(catalog: ModelCatalog): readonly Endpoint[] {
  return [
    dialectEndpoint(chatDialect, { catalog }),
    dialectEndpoint(responsesDialect, { catalog }),
    dialectEndpoint(messagesDialect, { catalog }),
    messagesCountTokensEndpoint(catalog),
    imageGenerations(catalog),
    imageEdits(catalog),
    decisions(catalog),
    prepaidCodes(catalog),
    prepaidCodesWithDefaults(catalog),
    prepaidTopUp(catalog),
    embeddingsEndpoint(catalog),
    freeChatCompletions(catalog),
    freeChatQuotaEndpoint,
    prepaidStatusEndpoint,
    ownedKeysEndpoint,
    rotateKeyEndpoint,
    revokeKeyEndpoint,
    keyLimitsEndpoint,
    ownerSignInEndpoint,
    ownerSignOutEndpoint,
    channelRefundEndpoint,
    modelsEndpoint,
    x402ManifestEndpoint,
    healthEndpoint,
    openApiEndpoint,
    llmsTxtEndpoint,
    aiAgentsEndpoint,
    metricsEndpoint,
  ];
}

import { decisionModel } from "../../config/decision-model";
import { findGptModel, type GptModel } from "../../config/models";
import type { NetworkDefinition } from "../../networks";
import { parseChatRequest } from "../chat/chat-request";
import { countDecisionTokens } from "../decisions/create-decision";
import { parseDecisionRequest } from "../decisions/decision-request";
import { parseImageRequest } from "../images/image-request";
import { parsePrepaidPurchase } from "../prepaid/prepaid-purchase-request";
import { parseResponsesRequest } from "../responses/responses-request";
import { toChatRequest } from "../responses/to-chat-request";
import { countChatInputTokens } from "./count-tokens";
import { quoteImages } from "./quote-images";
import { quotePrepaidPack, quoteTokens } from "./quote-tokens";

export const quotablePaths = [
  "/v1/chat/completions",
  "/v1/responses",
  "/api/v1/images/generations",
  "/api/v1/images/image2image",
  "/jev",
  "/prepaid/codes",
  "/prepaid/codes/auto",
] as const;

/**
 * The price a paid endpoint quotes for a body, computed offline from the same parsers and price tables the
 * service uses (live settlement gas, where a network has it, is not included). Throws the endpoint's 400.
 */
export function quoteRequest(
  path: string,
  body: unknown,
  network: NetworkDefinition,
): { amount: bigint; display: Record<string, unknown> } {
  const route = path.replace(/^\/api(?=\/v1\/(chat|responses))/, "");
  switch (route) {
    case "/v1/chat/completions": {
      const parsed = parseChatRequest(body);
      const inputTokens = countChatInputTokens(parsed.body.messages, parsed.body.tools);
      return quoteTokens({ model: parsed.model, inputTokens, maxOutputTokens: parsed.maxOutputTokens, network });
    }
    case "/v1/responses": {
      const parsed = parseResponsesRequest(body);
      const chat = toChatRequest(parsed);
      const inputTokens = countChatInputTokens(chat.messages as { role: string }[], chat.tools);
      return quoteTokens({ model: parsed.model, inputTokens, maxOutputTokens: parsed.maxOutputTokens, network });
    }
    case "/api/v1/images/generations":
    case "/api/v1/images/image2image": {
      const parsed = parseImageRequest(body, route.endsWith("image2image"));
      return quoteImages(parsed.model, parsed.n, network);
    }
    case "/jev":
      return quoteTokens({
        model: decisionModel,
        inputTokens: countDecisionTokens(parseDecisionRequest(body)),
        maxOutputTokens: 0,
        network,
      });
    case "/prepaid/codes":
    case "/prepaid/codes/auto": {
      const purchase = parsePrepaidPurchase(body, route.endsWith("auto"));
      const model = findGptModel(purchase.model) as GptModel;
      return quotePrepaidPack(model, purchase.tokens, network);
    }
    default:
      throw new Error(`${path} is not a paid endpoint; paid endpoints: ${quotablePaths.join(", ")}`);
  }
}

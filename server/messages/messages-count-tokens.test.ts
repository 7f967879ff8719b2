import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultCatalog } from "../../config/catalog/default-catalog";
import { chatLimits } from "../../config/limits";
import { startLocalUpstream, type LocalUpstream } from "../../cli/dev-stack/local-upstream";
import { countChatRequestInputTokens } from "../pricing/count-tokens";
import { quoteCompletion } from "../pricing/quote-completion";
import { base } from "../../networks/eip155-8453";
import { countMessagesTokens } from "./messages-count-tokens";
import { parseCountTokensRequest, parseMessagesRequest } from "./messages-request";
import { toChatRequest } from "./to-chat-request";

const catalog = defaultCatalog();
const request = {
  model: "vendor-a/gpt-6-luna",
  system: "You are terse.",
  tools: [
    {
      name: "lookup",
      description: "Finds a term",
      input_schema: { type: "object", properties: { term: { type: "string" } } },
    },
  ],
  messages: [
    { role: "user", content: "use lookup for owls" },
    { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "lookup", input: { term: "owls" } }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "Owls are birds." }] },
  ],
};

let provider: LocalUpstream;
beforeAll(async () => {
  provider = await startLocalUpstream({ port: 0 });
});
afterAll(() => provider?.stop());

describe("countMessagesTokens", () => {
  it("counts the translated chat request as the quote counts it", async () => {
    const counted = await countMessagesTokens(parseCountTokensRequest(request, catalog));
    const parsed = parseMessagesRequest({ ...request, max_tokens: 50 }, catalog);
    expect(counted.input_tokens).toBe(countChatRequestInputTokens(toChatRequest(parsed)));
    const quote = await quoteCompletion({
      model: parsed.model,
      request: toChatRequest(parsed),
      maxOutputTokens: 50,
      network: base,
      description: "",
    });
    expect(quote.tokens?.input).toBe(counted.input_tokens);
  });

  it("refuses an input over the quote's limit as the quote does, its count stopped soon past it", async () => {
    const model = catalog.chat.find((chat) => chat.id === request.model)!;
    const limit = Math.min(chatLimits.maxInputTokens, model.contextTokens);
    // 20 MB of words: far over any limit, refused as a paid call's quote is, with "more than" the limit.
    const huge = { model: request.model, messages: [{ role: "user", content: "ledger ".repeat(3_000_000) }] };
    await expect(countMessagesTokens(parseCountTokensRequest(huge, catalog))).rejects.toMatchObject({
      code: "context_length_exceeded",
      message: expect.stringContaining(`more than ${limit} tokens`),
    });
  });

  it("is what the development provider reports as input, natively", async () => {
    const counted = await countMessagesTokens(parseCountTokensRequest(request, catalog));
    const response = await fetch(`${provider.url}/v1/messages`, {
      method: "POST",
      body: JSON.stringify({ ...request, max_tokens: 50 }),
    });
    const message = (await response.json()) as { usage: { input_tokens: number } };
    expect(message.usage.input_tokens).toBe(counted.input_tokens);
    expect(counted.input_tokens).toBeGreaterThan(20);
  });
});

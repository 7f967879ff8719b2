import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { SERVICE_VERSION } from "../../config/version";
import { PayingClient, PaymentRefused } from "./paying-client";

const text = (value: string, isError = false) => ({ content: [{ type: "text" as const, text: value }], isError });

/** A tool failure is a result with isError, never a protocol error; messages never carry the wallet key. */
function failure(error: unknown) {
  if (error instanceof PaymentRefused) return text(`Refused: ${error.message}`, true);
  const cause = (error as { cause?: { code?: string } }).cause?.code;
  return text(`Failed: ${cause ?? (error as Error).message}`, true);
}

interface ModelList {
  data: {
    id: string;
    type?: string;
    context_length?: number;
    max_output_tokens?: number;
    pricing?: Record<string, string>;
  }[];
}

interface ChatCompletion {
  model?: string;
  choices?: { message?: { content?: string | null } }[];
  usage?: Record<string, number>;
}

/** The stdio MCP server of `paysvc mcp`: list_models and chat_completion, paid within the owner's limits. */
export function createMcpServer(client: PayingClient): McpServer {
  const server = new McpServer({ name: "paysvc", version: SERVICE_VERSION });

  server.registerTool(
    "list_models",
    {
      title: "List models",
      description: "The GPT models this deployment sells, with their prices in USD per 1M tokens.",
    },
    async () => {
      try {
        const list = (await client.getJson("/v1/models")) as ModelList;
        const models = list.data
          .filter((model) => (model.type ?? "chat") === "chat")
          .map((model) => ({
            id: model.id,
            input_usd_per_1m_tokens: model.pricing?.input_per_1m_tokens,
            output_usd_per_1m_tokens: model.pricing?.output_per_1m_tokens,
            context_length: model.context_length,
            max_output_tokens: model.max_output_tokens,
          }));
        return text(JSON.stringify(models, null, 2));
      } catch (error) {
        return failure(error);
      }
    },
  );

  server.registerTool(
    "chat_completion",
    {
      title: "Chat completion (paid)",
      description:
        "Asks a model and pays for it with the configured wallet: only the configured recipient, on the deployment's network, and never more than the configured maximum per request. Returns the answer, the usage, the amount paid and the settlement transaction.",
      inputSchema: {
        model: z.string().describe("a model id from list_models"),
        messages: z
          .array(z.object({ role: z.enum(["system", "user", "assistant"]), content: z.string() }))
          .min(1)
          .describe("the conversation"),
        max_tokens: z
          .number()
          .int()
          .min(1)
          .max(128_000)
          .optional()
          .describe("output cap; the price depends on it (default 4096)"),
        temperature: z.number().min(0).max(2).optional(),
      },
    },
    async (args) => {
      try {
        const answer = await client.post("/v1/chat/completions", args);
        const completion = answer.body as ChatCompletion;
        const result = {
          answer: completion.choices?.[0]?.message?.content ?? "",
          model: completion.model,
          usage: completion.usage,
          payment: answer.paid ?? null,
        };
        return text(JSON.stringify(result, null, 2));
      } catch (error) {
        return failure(error);
      }
    },
  );
  return server;
}

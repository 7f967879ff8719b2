import { createHash } from "node:crypto";
import { contentText, type CountableMessage } from "../../server/pricing/count-tokens";

interface ChatTool {
  type?: unknown;
  function?: { name?: unknown; parameters?: { properties?: Record<string, { type?: unknown }>; required?: unknown } };
}

export interface DevToolCall {
  id: string;
  name: string;
  arguments: string;
}

/**
 * Decides whether the development provider answers with a tool call, as a real model would when it is offered
 * tools and asked for one: `tool_choice` "required" or naming a function, or (with "auto") a last user message
 * that names one of the offered functions. After a tool result the provider answers with text.
 */
export function devToolCall(
  messages: readonly CountableMessage[],
  tools: unknown,
  toolChoice: unknown,
): DevToolCall | undefined {
  if (!Array.isArray(tools) || tools.length === 0 || toolChoice === "none") return undefined;
  const offered = (tools as ChatTool[]).filter((tool) => typeof tool.function?.name === "string");
  const last = messages.at(-1);
  if (!last || last.role === "tool") return undefined;
  const named = (toolChoice as { function?: { name?: unknown } } | undefined)?.function?.name;
  const lastText = contentText(last.content);
  const chosen =
    offered.find((tool) => tool.function?.name === named) ??
    (toolChoice === "required" ? offered[0] : undefined) ??
    (last.role === "user" ? offered.find((tool) => lastText.includes(String(tool.function?.name))) : undefined);
  if (!chosen) return undefined;
  const name = String(chosen.function?.name);
  const digest = createHash("sha256").update(name).update(lastText).digest("hex");
  return { id: `call_${digest.slice(0, 24)}`, name, arguments: JSON.stringify(exampleArguments(chosen, lastText)) };
}

/** Arguments that satisfy the tool's JSON schema in the simple cases: one value per property, by type. */
function exampleArguments(tool: ChatTool, text: string): Record<string, unknown> {
  const properties = tool.function?.parameters?.properties ?? {};
  const words = text.split(/\W+/).filter((word) => word.length > 2);
  return Object.fromEntries(
    Object.entries(properties).map(([property, schema], index) => {
      switch (schema.type) {
        case "number":
        case "integer":
          return [property, index + 1];
        case "boolean":
          return [property, true];
        case "array":
          return [property, []];
        case "object":
          return [property, {}];
        default:
          return [property, words.at(-1 - index) ?? property];
      }
    }),
  );
}

import { DROPPED_ITEM_TYPES, type ContentPart, type InputItem } from "./responses-items";

const DROPPED: readonly string[] = DROPPED_ITEM_TYPES;

/** A content part with the fields the model reads: a text's text, an image's URL and detail. */
function part(value: ContentPart): ContentPart {
  if (value.type === "input_image") {
    return { type: "input_image", image_url: value.image_url, ...(value.detail ? { detail: value.detail } : {}) };
  }
  return { type: value.type, text: value.text };
}

const content = (value: string | ContentPart[]) => (typeof value === "string" ? value : value.map(part));

/**
 * The input a route that speaks Responses natively is sent: exactly what the quote counted (the canonical chat
 * request's messages, calls, outputs and images), each item with the fields the model reads. Items the translation
 * drops (reasoning passed back, hosted tools' calls and outputs, a computer's screenshots) are dropped here too:
 * forwarded, they would be input the price never counted.
 */
export function nativeInput(input: string | InputItem[], pricedTools: (tools: unknown) => unknown): unknown {
  if (typeof input === "string") return input;
  return input
    .filter((item) => item.type === undefined || !DROPPED.includes(item.type))
    .map((item) => {
      switch (item.type) {
        case undefined:
        case "message":
          return { type: "message", role: item.role, content: content(item.content) };
        case "function_call":
          return { type: item.type, call_id: item.call_id, name: item.name, arguments: item.arguments };
        case "custom_tool_call":
          return { type: item.type, call_id: item.call_id, name: item.name, input: item.input };
        case "function_call_output":
        case "custom_tool_call_output":
          return { type: item.type, call_id: item.call_id, output: content(item.output) };
        case "additional_tools":
          return { type: item.type, tools: pricedTools(item.tools) };
        default:
          return item;
      }
    });
}

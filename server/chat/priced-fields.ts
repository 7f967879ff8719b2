import { ApiError } from "../core/errors";

/**
 * Request fields that change what the provider charges beyond the tokens a quote prices (input counted, output up
 * to the cap, one choice: `n` is held to 1 by the schemas). The catalog prices none of them, so a paid request
 * carrying one is refused with a 400 naming it, before any 402 or payment; a value that asks for nothing beyond
 * plain tokens (`service_tier: "default"`, `modalities: ["text"]`, null) passes.
 */
const UNPRICED: Record<string, { charge: string; harmless: (value: unknown) => boolean }> = {
  // "auto" follows the operator's project default, which may be a dearer tier; flex and scale are other rates too.
  service_tier: {
    charge: "a service tier other than default is billed at another rate",
    harmless: (value) => value === null || value === "default",
  },
  modalities: {
    charge: "audio output is billed at audio token rates",
    harmless: (value) => value === null || (Array.isArray(value) && value.every((modality) => modality === "text")),
  },
  audio: { charge: "audio output is billed at audio token rates", harmless: (value) => value === null },
  web_search_options: { charge: "web search is billed per search", harmless: (value) => value === null },
  // Rejected prediction tokens are billed as output, beyond the output cap the quote priced.
  prediction: { charge: "rejected predicted tokens are billed as output", harmless: (value) => value === null },
};

/** Refuses the first field of `body` whose cost the price does not cover, naming it; `endpoint` words the advice. */
export function refuseUnpricedFields(body: Record<string, unknown>, endpoint: string): void {
  for (const [field, { charge, harmless }] of Object.entries(UNPRICED)) {
    if (!(field in body) || harmless(body[field])) continue;
    throw new ApiError(
      "invalid_request",
      `Unsupported parameter: '${field}' changes what the provider charges (${charge}), and ${endpoint} prices only input tokens and output up to the output cap. Remove '${field}'`,
      { param: field },
    );
  }
}

/**
 * The fields the paid chat forwards besides model, messages and the output caps: OpenAI's chat fields whose cost
 * is the tokens the quote prices (sampling, tools, formats, logprobs, caching and bookkeeping hints), and the
 * priced-elsewhere ones above, which reach here only with a harmless value.
 */
export const FORWARDED_CHAT_FIELDS: readonly string[] = [
  "model",
  "messages",
  "max_tokens",
  "max_completion_tokens",
  "n",
  "stream",
  "stream_options",
  "temperature",
  "top_p",
  "stop",
  "presence_penalty",
  "frequency_penalty",
  "seed",
  "logit_bias",
  "logprobs",
  "top_logprobs",
  "response_format",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "functions",
  "function_call",
  // Reasoning and verbosity change how many output tokens are written, within the priced cap.
  "reasoning_effort",
  "verbosity",
  "user",
  "safety_identifier",
  "metadata",
  "store",
  "prompt_cache_key",
  "prompt_cache_retention",
  ...Object.keys(UNPRICED),
];

/**
 * The body a paid chat forwards: the allow-listed fields. Any other field is refused naming it (a provider's own
 * extension may route to dearer models or tools: an OpenRouter `plugins`, a `provider` order), except a null,
 * which asks for nothing and is dropped.
 */
export function forwardedChatFields(body: Record<string, unknown>): Record<string, unknown> {
  refuseUnpricedFields(body, "/v1/chat/completions");
  const forwarded: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(body)) {
    if (FORWARDED_CHAT_FIELDS.includes(field)) forwarded[field] = value;
    else if (value !== null) {
      throw new ApiError(
        "invalid_request",
        `Unsupported parameter: '${field}'. A paid chat forwards only fields its price covers: ${FORWARDED_CHAT_FIELDS.join(", ")}`,
        { param: field },
      );
    }
  }
  return forwarded;
}

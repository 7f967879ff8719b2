import { ApiError } from "../core/errors";

/**
 * Which top-level Messages fields are read, which are accepted and dropped, and which are refused for their price.
 * The policy is the paid chat's (chat/priced-fields.ts): a field that changes what the provider charges beyond the
 * tokens a quote prices is refused with a 400 naming it, before any 402; a value that asks for nothing beyond plain
 * tokens passes.
 */

/** The fields translated to a chat request. */
export const TRANSLATED_FIELDS = [
  "model",
  "messages",
  "max_tokens",
  "system",
  "temperature",
  "top_p",
  "top_k",
  "stop_sequences",
  "stream",
  "tools",
  "tool_choice",
  "metadata",
  "thinking",
] as const;

/**
 * Fields a chat provider cannot honour, accepted and dropped when translating (a route that speaks Messages natively
 * is sent them): context editing, output settings, prompt-cache hints, compaction, diagnostics. None changes the
 * price: cache hints are stripped before a native call (native-request.ts), so input is billed uncached as quoted.
 */
export const DROPPED_FIELDS = [
  "context_management",
  "output_config",
  "output_format",
  "cache_control",
  "compaction",
  "diagnostics",
] as const;

/**
 * Beta fields accepted and sent to no provider: settings of the caller's own Anthropic account (workspace, user
 * profile, thread), remote MCP servers the provider would call on the caller's behalf, and `betas` (the SDK sends
 * them as the anthropic-beta header; in the body they ask for nothing a provider here is told).
 */
export const NOT_FORWARDED_FIELDS = ["betas", "workspace_id", "user_profile_id", "thread", "mcp_servers"] as const;

const UNPRICED: Record<string, { charge: string; harmless: (value: unknown) => boolean }> = {
  service_tier: {
    charge: "'auto' may be served at the priority tier's rates",
    harmless: (value) => value === null || value === "standard_only",
  },
  speed: {
    charge: "the fast mode is billed at higher rates",
    harmless: (value) => value === null || value === "standard",
  },
  inference_geo: {
    charge: "inference pinned to a region is billed at higher rates",
    harmless: (value) => value === null || value === "global",
  },
  container: { charge: "code execution containers are billed by the hour", harmless: (value) => value === null },
  fallbacks: { charge: "fallback models are billed at their own rates", harmless: (value) => value === null },
  billing_policy: { charge: "it chooses how the call is billed", harmless: (value) => value === null },
  fallback_credit_token: { charge: "it bills the call to other credit", harmless: (value) => value === null },
};

export const PRICED_FIELDS = Object.keys(UNPRICED);

/** The fields a Messages request may carry. */
export const KNOWN_FIELDS: readonly string[] = [
  ...TRANSLATED_FIELDS,
  ...DROPPED_FIELDS,
  ...NOT_FORWARDED_FIELDS,
  ...PRICED_FIELDS,
];

/**
 * Refuses a field whose cost the price does not cover (naming it and why), then any field not known (naming it
 * and the fields accepted), both as 400s.
 */
export function refuseUnknownOrPricedFields(body: Record<string, unknown>): void {
  for (const [field, { charge, harmless }] of Object.entries(UNPRICED)) {
    if (!(field in body) || harmless(body[field])) continue;
    throw new ApiError(
      "invalid_request",
      `${field}: changes what the provider charges (${charge}), and /v1/messages prices only input tokens and output up to max_tokens. Remove '${field}'`,
      { param: field },
    );
  }
  const unknown = Object.keys(body).find((field) => !KNOWN_FIELDS.includes(field));
  if (unknown !== undefined) {
    throw new ApiError(
      "invalid_request",
      `${unknown}: Extra inputs are not permitted. The Messages API here accepts: ${KNOWN_FIELDS.join(", ")}`,
      { param: unknown },
    );
  }
}

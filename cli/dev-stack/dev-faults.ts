/**
 * How the development provider misbehaves on demand, for tests of the gateway's failure handling: a request
 * whose prompt (last user message, image prompt, or decision state) contains `[paysvc-dev-fault:<fault>]`.
 * - http-error: answers 500; rate-limited: answers 429; hang: never answers; break-mid-stream: a stream stops halfway;
 * - stall-mid-stream: a stream goes silent halfway, its connection open, as a model thinking at length does;
 * - bad-url: images come back as a non-http URL; bad-shape: a decision answer of the wrong shape;
 * - error-in-200: a chat answer is an error sent with status 200 (a stream's first event, after a comment);
 * - hidden-reasoning: the usage reports 100 reasoning tokens more than the text, and a stream sends it 300 ms late;
 * - no-usage: a stream never reports its usage, even when asked;
 * - more-input: the usage reports 1000 input tokens more than the prompt counts, as a provider whose count differs.
 */
const FAULTS = [
  "http-error",
  "rate-limited",
  "hang",
  "break-mid-stream",
  "stall-mid-stream",
  "bad-url",
  "bad-shape",
  "error-in-200",
  "hidden-reasoning",
  "no-usage",
  "more-input",
] as const;

export type UpstreamFault = "none" | (typeof FAULTS)[number];

const FAULT_DIRECTIVE = new RegExp(`\\[paysvc-dev-fault:(${FAULTS.join("|")})\\]`);

/** Faults a whole provider can be put in (a test's outage of one route), beside the prompt's directives. */
export type ProviderOutage = Extract<UpstreamFault, "http-error" | "rate-limited" | "hang" | "error-in-200">;

/** How a request's fault is found: the provider's outage first, then (where enabled) the prompt's directive. */
export interface DevFaults {
  in(text: string): UpstreamFault;
}

/**
 * Directives are honoured only where the development stack turns them on (`paysvc dev`, the tests): a development
 * provider started for anything else treats them as text, as real providers do.
 */
export function devFaults(options: { directives: boolean; outage: () => ProviderOutage | undefined }): DevFaults {
  return {
    in(text) {
      const outage = options.outage();
      if (outage) return outage;
      if (!options.directives) return "none";
      return (FAULT_DIRECTIVE.exec(text)?.[1] as UpstreamFault | undefined) ?? "none";
    },
  };
}

/** The body of an error sent with status 200, as some providers do when the model fails after the status line. */
export const ERROR_IN_200 = {
  error: { message: "development provider fault: error-in-200", type: "server_error", code: 502 },
};

/** The whole answer of a provider failing with `fault` before any work (an error, or nothing at all for hang). */
export function failedAnswer(
  fault: UpstreamFault,
): { status: number; body: unknown; headers?: Record<string, string> } | "hang" | undefined {
  if (fault === "http-error") {
    return {
      status: 500,
      body: { error: { message: "development provider fault: http-error", type: "server_error" } },
    };
  }
  if (fault === "rate-limited") {
    return {
      status: 429,
      headers: { "retry-after": "1" },
      body: { error: { message: "development provider fault: rate-limited", type: "rate_limit_error" } },
    };
  }
  if (fault === "error-in-200") {
    return { status: 200, body: ERROR_IN_200 };
  }
  if (fault === "hang") return "hang";
  return undefined;
}

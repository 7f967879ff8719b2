/**
 * How the development provider misbehaves on demand, for tests of the gateway's failure handling: a request
 * whose prompt (last user message, image prompt, or decision state) contains `[paysvc-dev-fault:<fault>]`.
 * - http-error: answers 500; hang: never answers; break-mid-stream: a stream stops halfway;
 * - stall-mid-stream: a stream goes silent halfway, its connection open, as a model thinking at length does;
 * - bad-url: images come back as a non-http URL; bad-shape: a decision answer of the wrong shape;
 * - error-in-200: a chat answer is an error sent with status 200 (a stream's first event, after a comment);
 * - hidden-reasoning: the usage reports 100 reasoning tokens more than the text, and a stream sends it 300 ms late;
 * - no-usage: a stream never reports its usage, even when asked.
 */
const FAULTS = [
  "http-error",
  "hang",
  "break-mid-stream",
  "stall-mid-stream",
  "bad-url",
  "bad-shape",
  "error-in-200",
  "hidden-reasoning",
  "no-usage",
] as const;

export type UpstreamFault = "none" | (typeof FAULTS)[number];

const FAULT_DIRECTIVE = new RegExp(`\\[paysvc-dev-fault:(${FAULTS.join("|")})\\]`);

export function faultIn(text: string): UpstreamFault {
  return (FAULT_DIRECTIVE.exec(text)?.[1] as UpstreamFault | undefined) ?? "none";
}

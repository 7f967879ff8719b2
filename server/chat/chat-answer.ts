import { providerRefusal, UpstreamError } from "../upstream/upstream-error";

/**
 * A whole chat completion as the upstream sent it, checked to be one: a 200 that carries `{"error": ...}` (some
 * providers send that when the model fails after the status line) or no choice at all is a failed call, which is
 * neither settled nor charged.
 */
export function chatCompletionAnswer(body: Record<string, unknown>): Record<string, unknown> {
  if (body.error !== undefined && body.error !== null) {
    throw providerRefusal("upstream answered 200 with an error", JSON.stringify(body.error), "chat provider");
  }
  if (!Array.isArray(body.choices) || body.choices.length === 0) {
    throw new UpstreamError("protocol", "upstream answered a chat completion without choices");
  }
  return body;
}

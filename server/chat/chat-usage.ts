/** The output tokens a whole chat completion reports (`usage.completion_tokens`). */
export function completionTokens(value: unknown): number | undefined {
  const tokens = (value as { usage?: { completion_tokens?: unknown } } | null)?.usage?.completion_tokens;
  return typeof tokens === "number" ? tokens : undefined;
}

/**
 * A reported token count, or undefined when it is not one: anything but a non-negative safe integer (a negative
 * count would lower a charge below nothing, a fraction or a huge number would not fit the ledger's integers) is
 * treated as a missing report, which bills the answer as an unreported one is.
 */
export function tokenCount(value: unknown): number | undefined {
  return Number.isSafeInteger(value) && (value as number) >= 0 ? (value as number) : undefined;
}

/** The input tokens a whole chat completion reports (`usage.prompt_tokens`). */
export function promptTokens(value: unknown): number | undefined {
  return tokenCount((value as { usage?: { prompt_tokens?: unknown } } | null)?.usage?.prompt_tokens);
}

/** The output tokens a whole chat completion reports (`usage.completion_tokens`). */
export function completionTokens(value: unknown): number | undefined {
  return tokenCount((value as { usage?: { completion_tokens?: unknown } } | null)?.usage?.completion_tokens);
}

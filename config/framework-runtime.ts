/** Which runtime the framework loads a file in (`nodejs` or `edge`): its own flag, read here like every variable. */
export function frameworkRuntime(): string | undefined {
  return process.env.NEXT_RUNTIME;
}

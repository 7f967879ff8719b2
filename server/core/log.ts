const pending: { line: string; error: boolean }[] = [];

/**
 * Writes the lines logged so far. Standard output to a pipe is written synchronously on Linux, about 0.3 ms a
 * line when the reader must be woken, so lines are written once the current work (an answer being sent) is done,
 * and when the process exits.
 */
function flush(): void {
  for (const { line, error } of pending.splice(0)) (error ? process.stderr : process.stdout).write(`${line}\n`);
}
process.on("exit", flush);

/**
 * One JSON line per event on stdout (errors on stderr). A request's lines carry its trace id while tracing is on:
 * its callers pass `trace_id` (the request's `trace.span.traceId`; a field left undefined is not written). Callers
 * never pass secrets such as keys or signatures.
 */
export function logEvent(level: "info" | "warn" | "error", event: string, fields: Record<string, unknown> = {}): void {
  const line = JSON.stringify({
    time: new Date().toISOString(),
    level,
    event,
    ...fields,
  });
  if (pending.length === 0) setImmediate(flush);
  pending.push({ line, error: level === "error" });
}

/**
 * An event stream whose chunks name the provider's model (its id for the route, or a dated version of it), rewritten
 * to name the sold id: the caller always sees the id it bought. Only whole lines are rewritten (a value split
 * across two reads is joined first); every other byte passes as it came. A "model" inside a string (a tool call's
 * arguments, the text) is escaped there, so it is never taken for the chunk's own.
 */
export function withSoldModelId(soldId: string): TransformStream<Uint8Array, Uint8Array> {
  const pattern = /("model"\s*:\s*)"(?:[^"\\]|\\.)*"/g;
  const replacement = `$1${JSON.stringify(soldId).replaceAll("$", "$$$$")}`;
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let pending = "";
  return new TransformStream({
    transform(chunk, controller) {
      pending += decoder.decode(chunk, { stream: true });
      const end = pending.lastIndexOf("\n") + 1;
      if (end === 0) return;
      controller.enqueue(encoder.encode(pending.slice(0, end).replace(pattern, replacement)));
      pending = pending.slice(end);
    },
    flush(controller) {
      pending += decoder.decode();
      if (pending) controller.enqueue(encoder.encode(pending.replace(pattern, replacement)));
    },
  });
}

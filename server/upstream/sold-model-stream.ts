/**
 * An event stream whose chunks name the provider's model id, rewritten to name the sold id: the caller always sees
 * the id it bought. Only whole lines are rewritten (an id split across two reads is joined first); every other byte
 * passes as it came. Used only where the two ids differ.
 */
export function withSoldModelId(providerId: string, soldId: string): TransformStream<Uint8Array, Uint8Array> {
  const escaped = JSON.stringify(providerId).replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const pattern = new RegExp(`("model"\\s*:\\s*)${escaped}`, "g");
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

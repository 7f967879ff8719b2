import type { ApiRequest } from "./api-request";

/**
 * A request's body, read once, or undefined when it is larger than `maxBytes`: refused early by its Content-Length,
 * or while reading when the length is not declared, instead of being buffered whole.
 */
export async function readBodyBytes(request: ApiRequest, maxBytes: number): Promise<Buffer | undefined> {
  const declared = Number(request.headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > maxBytes) return undefined;
  if (request.bodyBytes) {
    const { buffer, byteOffset, byteLength } = request.bodyBytes;
    return byteLength > maxBytes ? undefined : Buffer.from(buffer, byteOffset, byteLength);
  }
  if (!request.body) return Buffer.alloc(0);

  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      // Not cancelled: the server drains what is left (http/unread-body.ts), which keeps the connection usable.
      reader.releaseLock();
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

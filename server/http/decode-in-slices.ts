import { createHash } from "node:crypto";
import { StringDecoder } from "node:string_decoder";

/** Bytes decoded (and hashed) between two checks of the time spent: a few milliseconds of the slowest text. */
const DECODE_BYTES = 256 * 1024;
/** Work between two yields to the event loop. */
const SLICE_MS = 8;

/**
 * A large body's bytes (in the chunks it arrived in) as text, exactly as `toString("utf8")` decodes them (invalid sequences as U+FFFD alike, a
 * byte order mark kept), and their SHA-256 in hex, slice by slice, yielding to the event loop between slices:
 * decoding 24 MB of emoji takes 150-300 ms here, hashing 24 MB 25-40 ms.
 */
export async function decodeInSlices(
  chunks: readonly Uint8Array[],
  sliceBytes = DECODE_BYTES,
): Promise<{ text: string; sha256: string }> {
  const decoder = new StringDecoder("utf8");
  const hash = createHash("sha256");
  const parts: string[] = [];
  let sliceStart = performance.now();
  for (const chunk of chunks) {
    for (let at = 0; at < chunk.byteLength; at += sliceBytes) {
      const slice = chunk.subarray(at, at + sliceBytes);
      parts.push(decoder.write(Buffer.from(slice.buffer, slice.byteOffset, slice.byteLength)));
      hash.update(slice);
      if (performance.now() - sliceStart >= SLICE_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        sliceStart = performance.now();
      }
    }
  }
  parts.push(decoder.end());
  return { text: parts.join(""), sha256: hash.digest("hex") };
}

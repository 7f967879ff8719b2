import { readFileSync } from "node:fs";

const CHUNK = "--- chunk ---\n";
const END = "--- end ---\n";

/** The network chunks of `__fixtures__/<name>.chunks.txt`, decoded as README.md describes. */
export function readChunks(name: string): string[] {
  // The line end before the first marker ends the header (or stands for it, when there is none).
  const file = `\n${readFileSync(new URL(`./${name}.chunks.txt`, import.meta.url), "utf8")}`;
  const start = file.indexOf(`\n${CHUNK}`);
  // A file cut short (an editor that trims trailing blank lines) would lose the last chunk's line ends silently.
  if (start === -1 || !file.endsWith(`\n${END}`)) throw new Error(`${name}.chunks.txt: no chunk, or no end line`);
  const body = file.slice(start + 1, file.length - END.length - 1);
  return body
    .split(`\n${CHUNK}`)
    .map((chunk, index) => (index === 0 ? chunk.slice(CHUNK.length) : chunk))
    .map((chunk) => chunk.replace(/\\\\r|\\r/g, (escape) => (escape === "\\r" ? "\r" : "\\r")));
}

/** A byte stream of `chunks`, one read each; with `failAfter`, the read after the last fails (a network error). */
export function streamOf(chunks: readonly string[], options: { failAfter?: boolean } = {}): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let index = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks[index++];
      if (chunk !== undefined) controller.enqueue(encoder.encode(chunk));
      else if (options.failAfter) controller.error(new Error("socket hang up"));
      else controller.close();
    },
  });
}

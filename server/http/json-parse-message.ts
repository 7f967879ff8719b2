import { Worker } from "node:worker_threads";

/**
 * JSON.parse's own error message for a body, from a worker thread: the same engine, the same text (the bytes
 * decoded as the main thread decodes them), so the same words and position, without holding the event loop for
 * the whole parse of a large body that fails near its end. Null if JSON.parse accepts it. One worker at a time,
 * each for one body, so that a flood of large invalid bodies costs one thread, not one per request.
 */
export function jsonParseMessage(chunks: readonly Uint8Array[]): Promise<string | null> {
  const run = queue.then(() => inWorker(chunks));
  queue = run.catch(() => undefined);
  return run;
}

let queue: Promise<unknown> = Promise.resolve();

const SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
let message = null;
try {
  JSON.parse(Buffer.concat(workerData).toString("utf8"));
} catch (error) {
  message = String(error.message);
}
parentPort.postMessage(message);
`;

function inWorker(chunks: readonly Uint8Array[]): Promise<string | null> {
  // Copies of exactly these bytes, moved to the worker rather than cloned (a chunk may view a larger buffer).
  const copies = chunks.map((chunk) => new Uint8Array(chunk));
  return new Promise((resolve, reject) => {
    const worker = new Worker(SOURCE, {
      eval: true,
      workerData: copies,
      transferList: copies.map((copy) => copy.buffer),
    });
    worker.once("message", (message: string | null) => resolve(message));
    worker.once("error", reject);
    worker.once("exit", (code) => reject(new Error(`the JSON worker exited (${code}) without an answer`)));
  });
}

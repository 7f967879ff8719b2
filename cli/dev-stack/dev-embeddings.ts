import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { countTextTokens } from "../../server/pricing/count-tokens";
import { failedAnswer, type DevFaults } from "./dev-faults";
import { readJson, sendJson } from "../lib/json-http-server";

const DIMENSIONS = 1024;

/**
 * A deterministic unit vector for a text: its words and character trigrams hashed into signed dimensions, so
 * the same text gives the same vector and texts sharing words and spellings lie closer than unrelated ones.
 */
export function devEmbedding(text: string): number[] {
  const vector = new Array<number>(DIMENSIONS).fill(0);
  const normalized = text.toLowerCase();
  const words = normalized.split(/\W+/).filter(Boolean);
  const padded = ` ${normalized} `;
  const features = [
    ...words.map((word) => `w:${word}`),
    ...Array.from({ length: Math.max(0, padded.length - 2) }, (_, index) => `t:${padded.slice(index, index + 3)}`),
  ];
  for (const feature of features) {
    const digest = createHash("sha256").update(feature).digest();
    const dimension = digest.readUInt16BE(0) % DIMENSIONS;
    vector[dimension]! += digest[2]! & 1 ? 1 : -1;
  }
  const length = Math.hypot(...vector);
  if (length === 0) return vector.map((_, index) => (index === 0 ? 1 : 0));
  return vector.map((value) => value / length);
}

/** POST /v1/embeddings of the development provider. */
export async function devEmbeddings(
  request: IncomingMessage,
  response: ServerResponse,
  faults: DevFaults,
): Promise<void> {
  const body = (await readJson(request)) as { input?: unknown };
  const inputs =
    typeof body.input === "string"
      ? [body.input]
      : Array.isArray(body.input)
        ? (body.input as unknown[]).map(String)
        : [];
  if (inputs.length === 0) {
    return sendJson(response, 400, { error: { message: "input is required", type: "invalid_request_error" } });
  }
  const fault = faults.in(inputs.join("\n"));
  const failed = failedAnswer(fault);
  if (failed === "hang") return; // never answers; the caller's timeout must fire
  if (failed) return sendJson(response, failed.status, failed.body, failed.headers);
  const tokens = inputs.reduce((total, input) => total + countTextTokens(input), 0);
  sendJson(response, 200, {
    object: "list",
    data: inputs.map((input, index) => ({ object: "embedding", index, embedding: devEmbedding(input) })),
    model: "vendor-b/nemotron-3-embed-1b",
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  });
}

import type { AppContext } from "../context/app-context";
import { ApiError, isApiError } from "../core/errors";
import { readJsonBody } from "../http/read-json-body";
import { TokenCounter } from "../pricing/linear-token-count";
import { UpstreamError } from "../upstream/upstream-error";
import { embeddings } from "../../config/free-tier";
import {
  EMBEDDINGS_EXPECTED,
  InvalidEmbeddingsRequest,
  parseEmbeddingsRequest,
  refusedEmbeddingsBody,
} from "./embeddings-request";
import { jsonAnswer, PROVIDER_HEADER, type ApiAnswer } from "../http/api-answer";
import type { ApiRequest } from "../http/api-request";

/** A vector as OpenAI's base64 encoding has it: the float32 little-endian bytes, base64. */
export function toBase64Vector(vector: readonly number[]): string {
  const floats = new Float32Array(vector);
  return Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength).toString("base64");
}

function vectorsFrom(answer: Record<string, unknown>, count: number): number[][] {
  const data = Array.isArray(answer.data) ? (answer.data as { index?: unknown; embedding?: unknown }[]) : [];
  const vectors: number[][] = [];
  for (const [position, item] of data.entries()) {
    const index = typeof item.index === "number" ? item.index : position;
    const vector = item.embedding;
    if (
      !Array.isArray(vector) ||
      vector.length === 0 ||
      !vector.every((value) => typeof value === "number" && Number.isFinite(value))
    ) {
      throw new UpstreamError("protocol", "embedding upstream sent an embedding that is not an array of numbers");
    }
    vectors[index] = vector as number[];
  }
  if (vectors.length !== count || vectors.some((vector) => vector === undefined)) {
    throw new UpstreamError("protocol", `embedding upstream sent ${data.length} embeddings for ${count} inputs`);
  }
  return vectors;
}

/**
 * Endpoint 10 (free): embeddings with the fixed model; `model` in the request is ignored. Bounded per caller: the
 * configured windows (FREE_EMBEDDINGS_PER_10_MIN, FREE_EMBEDDINGS_PER_DAY) and input tokens per request
 * (FREE_EMBEDDINGS_MAX_INPUT_TOKENS). Refused requests and requests that fail upstream are not counted.
 */
export async function createEmbeddings(
  context: Pick<AppContext, "clientAddresses" | "config" | "freeEmbeddingsWindows" | "providers">,
  request: ApiRequest,
): Promise<ApiAnswer> {
  let value: unknown;
  try {
    value = (await readJsonBody(request, embeddings.maxBodyBytes)).value;
  } catch (error) {
    if (isApiError(error)) throw refusedEmbeddingsBody(error);
    throw error;
  }
  const parsed = parseEmbeddingsRequest(value);
  const model = context.config.catalog.embeddings;
  if (parsed.kind === "probe") {
    return jsonAnswer({ object: "list", data: [], model: model.id, hint: `Send ${EMBEDDINGS_EXPECTED}.` });
  }
  const inputs = typeof parsed.body.input === "string" ? [parsed.body.input] : parsed.body.input;
  const { maxInputTokens } = context.config.freeEmbeddings;
  // Counting stops soon past the cap: a body of megabytes costs no more than one at the cap.
  const counter = new TokenCounter(maxInputTokens);
  const promptTokens = inputs.reduce((total, input) => total + counter.count(input), 0);
  if (promptTokens > maxInputTokens) throw inputOverCap(maxInputTokens);
  const address = context.clientAddresses.resolve(request);
  return context.freeEmbeddingsWindows.serve(address, async (rateLimit) => {
    let served: { value: number[][]; provider: string };
    try {
      // The vectors are checked inside the routes' turn: a provider that sends too few is the next one's to replace.
      served = await context.providers.of(model, request.trace).postJson(
        "/embeddings",
        {
          input: inputs,
          encoding_format: "float",
          ...(parsed.body.input_type ? { input_type: parsed.body.input_type } : {}),
        },
        (answer) => vectorsFrom(answer, inputs.length),
      );
    } catch (error) {
      if (error instanceof UpstreamError) throw upstreamFailed(error);
      throw error;
    }
    const base64 = parsed.body.encoding_format === "base64";
    return jsonAnswer(
      {
        object: "list",
        data: served.value.map((vector, index) => ({
          object: "embedding",
          index,
          embedding: base64 ? toBase64Vector(vector) : vector,
        })),
        model: model.id,
        usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
      },
      { headers: { ...rateLimit, "Cache-Control": "no-store", [PROVIDER_HEADER]: served.provider } },
    );
  });
}

/** More input than one free request may carry: 400 in the endpoint's shape, naming the cap. */
/** Counting stops past the cap (TokenCounter), so the input's exact count is not known: only that it is over. */
function inputOverCap(cap: number): InvalidEmbeddingsRequest {
  return new InvalidEmbeddingsRequest(
    "context_length_exceeded",
    `The input counts more than ${cap} tokens; free embeddings read at most ${cap} input tokens per request, all strings together. Split the input over several requests`,
    "input",
  );
}

function upstreamFailed(error: UpstreamError): ApiError {
  return new ApiError("upstream_error", `The embedding provider failed (${error.message})`);
}

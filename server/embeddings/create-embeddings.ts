import type { AppContext } from "../app-context";
import { ApiError, isApiError } from "../errors";
import { readJsonBody } from "../http/read-json-body";
import { countTextTokens } from "../pricing/count-tokens";
import { UpstreamError } from "../upstream/upstream-error";
import { parseEmbeddingsRequest, refusedEmbeddingsBody, EMBEDDINGS_EXPECTED } from "./embeddings-request";
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

/** Endpoint 10 (free): embeddings with the fixed model; `model` in the request is ignored. */
export async function createEmbeddings(
  context: Pick<AppContext, "config" | "providers">,
  request: ApiRequest,
): Promise<ApiAnswer> {
  let value: unknown;
  try {
    value = (await readJsonBody(request)).value;
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
  let served: { value: number[][]; provider: string };
  try {
    // The vectors are checked inside the routes' turn: a provider that sends too few is the next one's to replace.
    served = await context.providers.of(model).postJson(
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
  const vectors = served.value;
  const base64 = parsed.body.encoding_format === "base64";
  const promptTokens = inputs.reduce((total, input) => total + countTextTokens(input), 0);
  return jsonAnswer(
    {
      object: "list",
      data: vectors.map((vector, index) => ({
        object: "embedding",
        index,
        embedding: base64 ? toBase64Vector(vector) : vector,
      })),
      model: model.id,
      usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
    },
    { headers: { [PROVIDER_HEADER]: served.provider } },
  );
}

function upstreamFailed(error: UpstreamError): ApiError {
  return new ApiError("upstream_error", `The embedding provider failed (${error.message})`);
}

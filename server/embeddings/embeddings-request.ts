import { z } from "zod";
import { embeddings } from "../../config/free-tier";
import { ApiError } from "../errors";
import { describeProblem } from "../validation";

/** What the endpoint accepts, as sent in every 400's `details` so a caller can fix the request. */
export const EMBEDDINGS_EXPECTED = `a JSON object with input: a non-empty string or an array of ${embeddings.minInputs} to ${embeddings.maxInputs} non-empty strings; optional input_type (query or passage), encoding_format (float or base64, default float) and model (accepted and ignored)`;

export const EMBEDDINGS_SCHEMA = {
  input: {
    required: true,
    oneOf: [
      { type: "string", minLength: 1 },
      {
        type: "array",
        items: { type: "string", minLength: 1 },
        minItems: embeddings.minInputs,
        maxItems: embeddings.maxInputs,
      },
    ],
  },
  input_type: { required: false, type: "string", enum: embeddings.inputTypes },
  encoding_format: { required: false, type: "string", enum: embeddings.encodingFormats, default: "float" },
  model: { required: false, type: "string", description: `ignored: every request is served by ${embeddings.model}` },
} as const;

const nonEmpty = z.string({ error: "must be a string" }).min(1, "must not be empty");

export const embeddingsSchema = z.looseObject({
  input: z.union(
    [
      nonEmpty,
      z
        .array(nonEmpty, { error: "must be a string or an array of strings" })
        .min(embeddings.minInputs, `must contain at least ${embeddings.minInputs} string`)
        .max(embeddings.maxInputs, `must contain at most ${embeddings.maxInputs} strings`),
    ],
    {
      error: `must be a non-empty string or an array of ${embeddings.minInputs} to ${embeddings.maxInputs} non-empty strings`,
    },
  ),
  input_type: z.enum(embeddings.inputTypes, { error: "must be query or passage" }).optional(),
  encoding_format: z.enum(embeddings.encodingFormats, { error: "must be float or base64" }).optional(),
  model: z.unknown().optional(),
});

export type EmbeddingsRequest = z.output<typeof embeddingsSchema>;

export function invalidEmbeddingsRequest(message: string, param: string | null): ApiError {
  return new ApiError("invalid_embeddings_request", message, {
    param,
    details: { details: { expected: EMBEDDINGS_EXPECTED, schema: EMBEDDINGS_SCHEMA } },
  });
}

/** `probe` when the body names a model and sends no input: the caller is asking what to send. */
export function parseEmbeddingsRequest(
  value: unknown,
): { kind: "probe" } | { kind: "request"; body: EmbeddingsRequest } {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalidEmbeddingsRequest("Request body must be a JSON object", null);
  }
  if ("model" in value && !("input" in value)) return { kind: "probe" };
  if (!("input" in value)) throw invalidEmbeddingsRequest("Missing required parameter: 'input'", "input");
  const result = embeddingsSchema.safeParse(value);
  if (result.success) return { kind: "request", body: result.data };
  const problem = describeProblem(result.error);
  throw invalidEmbeddingsRequest(problem.message, problem.param);
}

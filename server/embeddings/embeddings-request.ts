import { z } from "zod";
import { embeddings } from "../../config/free-tier";
import { ApiError, errorObject } from "../core/errors";
import { describeProblem } from "../core/validation";

/** What the endpoint accepts, as sent in every refusal's `details` so a caller can fix the request. */
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
  model: {
    required: false,
    type: "string",
    description: "ignored: every request is served by the one embedding model",
  },
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

/** What a refusal names when no single field is wrong: the body as a whole. */
const WHOLE_BODY = "body";

/**
 * A body this endpoint refuses keeps the status that says why: too large (413), not JSON-typed (415), or else 400
 * (more input tokens than a request may carry: `context_length_exceeded`).
 */
type EmbeddingsRefusal =
  "invalid_embeddings_request" | "context_length_exceeded" | "request_too_large" | "unsupported_media_type";

/**
 * Every refusal of bad input on endpoint 10 has the spec's body: type `invalid_request`, `param` a string, and
 * `details` describing the accepted request, so a caller can fix it from the answer alone, whatever was wrong.
 */
export class InvalidEmbeddingsRequest extends ApiError {
  constructor(code: EmbeddingsRefusal, message: string, param: string) {
    super(code, message, { param, details: { details: { expected: EMBEDDINGS_EXPECTED, schema: EMBEDDINGS_SCHEMA } } });
  }

  override body(): Record<string, unknown> {
    // The table's type for 413 and 415 is OpenAI's; this endpoint's is a constant of the spec.
    return { error: { ...errorObject(this.code, this.message, this.options), type: "invalid_request" } };
  }
}

export function invalidEmbeddingsRequest(message: string, param: string): InvalidEmbeddingsRequest {
  return new InvalidEmbeddingsRequest("invalid_embeddings_request", message, param);
}

/** A refusal of the body as read (size, content type, not JSON), in this endpoint's shape. */
export function refusedEmbeddingsBody(error: ApiError): InvalidEmbeddingsRequest {
  const { code, message } = error;
  if (code === "request_too_large") return new InvalidEmbeddingsRequest(code, message, WHOLE_BODY);
  if (code === "unsupported_media_type") return new InvalidEmbeddingsRequest(code, message, "content-type");
  return invalidEmbeddingsRequest(message, WHOLE_BODY);
}

/** `probe` when the body names a model and sends no input: the caller is asking what to send. */
export function parseEmbeddingsRequest(
  value: unknown,
): { kind: "probe" } | { kind: "request"; body: EmbeddingsRequest } {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalidEmbeddingsRequest("Request body must be a JSON object", WHOLE_BODY);
  }
  if ("model" in value && !("input" in value)) return { kind: "probe" };
  if (!("input" in value)) throw invalidEmbeddingsRequest("Missing required parameter: 'input'", "input");
  const result = embeddingsSchema.safeParse(value);
  if (result.success) return { kind: "request", body: result.data };
  const problem = describeProblem(result.error);
  throw invalidEmbeddingsRequest(problem.message, problem.param ?? WHOLE_BODY);
}

import { hash } from "node:crypto";
import { MAX_REQUEST_BODY_BYTES } from "../../config/limits";
import { ApiError } from "../core/errors";
import { logEvent } from "../core/log";
import type { ApiRequest } from "./api-request";
import { decodeInSlices } from "./decode-in-slices";
import { checkJsonShape } from "./json-shape";
import { jsonParseMessage } from "./json-parse-message";
import { joinChunks, readBodyChunks } from "./read-body-bytes";
import { MalformedJson, slicedJsonParse } from "./sliced-json-parse";

export { MAX_JSON_DEPTH, MAX_JSON_MEMBERS, MAX_JSON_VALUES } from "./json-shape";

export interface JsonBody {
  value: unknown;
  /**
   * SHA-256 of the raw bytes, hex: identifies "the same request body" for the payment ledger and the quote hold.
   * Computed when first read (a request billed to a prepaid key never needs it), or, for a body larger than
   * SLICED_BODY_BYTES, while it is decoded.
   */
  readonly sha256: string;
}

/**
 * Reads a JSON request body once, refusing it early when it is larger than `maxBytes` (by Content-Length, or while
 * reading when the length is not declared) instead of buffering it whole, and, before it is parsed, when its shape
 * is out of bounds (json-shape.ts): what any schema then walks is bounded, whatever the body.
 */
export async function readJsonBody(
  request: ApiRequest,
  maxBytes = MAX_REQUEST_BODY_BYTES,
  options: { optional?: boolean } = {},
): Promise<JsonBody> {
  const contentType = request.headers.get("content-type");
  if (contentType && !/^application\/([\w.+-]+\+)?json\b/i.test(contentType)) {
    throw new ApiError("unsupported_media_type", `Content-Type must be application/json, not ${contentType}`);
  }
  const chunks = await readBodyChunks(request, maxBytes);
  if (!chunks) throw tooLarge(maxBytes);
  let size = 0;
  for (const chunk of chunks) size += chunk.byteLength;
  if (size > SLICED_BODY_BYTES) return parseLargeJsonBody(chunks, size, options);
  return parseJsonBody(joinChunks(chunks), options);
}

/**
 * Bodies larger than this are kept in the chunks they arrived in, and decoded, hashed and parsed in slices
 * (decode-in-slices.ts, sliced-json-parse.ts), yielding to the event loop between them: JSON.parse of 24 MB of small objects holds it 300-400 ms here, of 1 MB
 * about 15 ms at most. Smaller ones are parsed at once, which costs less in all.
 */
export const SLICED_BODY_BYTES = 1024 * 1024;

async function parseJsonBody(bytes: Buffer, options: { optional?: boolean }): Promise<JsonBody> {
  const text = bytes.toString("utf8");
  if (text.trim() === "") return emptyBody(options);
  await checkJsonShape(text);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw notJson((error as Error).message);
  }
  let sha256: string | undefined;
  return {
    value,
    get sha256() {
      sha256 ??= hash("sha256", bytes, "hex");
      return sha256;
    },
  };
}

/** The same answers as for a small body (the same value, the same errors in the same words), in slices. */
async function parseLargeJsonBody(
  chunks: readonly Uint8Array[],
  size: number,
  options: { optional?: boolean },
): Promise<JsonBody> {
  const { text, sha256 } = await decodeInSlices(chunks);
  if (text.trim() === "") return emptyBody(options);
  await checkJsonShape(text);
  let parsed: Awaited<ReturnType<typeof slicedJsonParse>>;
  try {
    parsed = await slicedJsonParse(text);
  } catch (error) {
    if (!(error instanceof MalformedJson)) throw error;
    const message = await jsonParseMessage(chunks);
    if (message !== null) throw notJson(message);
    // JSON.parse accepts what the sliced parser refused: its value stands, whatever the wait.
    logEvent("error", "sliced_json_parse_refused_valid_json", { bytes: size });
    parsed = { value: JSON.parse(text) as unknown };
  }
  if (!parsed) return emptyBody(options);
  return { value: parsed.value, sha256 };
}

function emptyBody(options: { optional?: boolean }): JsonBody {
  if (options.optional) return { value: undefined, sha256: EMPTY_SHA256 };
  throw new ApiError("invalid_json", "Request body is required and must be JSON");
}

function notJson(message: string): ApiError {
  return new ApiError("invalid_json", `Request body is not valid JSON: ${message}`);
}

const EMPTY_SHA256 = hash("sha256", "", "hex");

function tooLarge(maxBytes: number): ApiError {
  return new ApiError("request_too_large", `Request body exceeds the limit of ${maxBytes} bytes`);
}

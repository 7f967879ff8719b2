import { hash } from "node:crypto";
import { MAX_REQUEST_BODY_BYTES } from "../../config/limits";
import { ApiError } from "../errors";
import type { ApiRequest } from "./api-request";

export interface JsonBody {
  value: unknown;
  /**
   * SHA-256 of the raw bytes, hex: identifies "the same request body" for the payment ledger and the quote hold.
   * Computed when first read: a request billed to a prepaid key never needs it.
   */
  readonly sha256: string;
}

/**
 * Reads a JSON request body once, refusing it early when it is larger than `maxBytes` (by Content-Length, or while
 * reading when the length is not declared) instead of buffering it whole.
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
  const declared = Number(request.headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes);
  if (request.bodyBytes) {
    if (request.bodyBytes.byteLength > maxBytes) throw tooLarge(maxBytes);
    return parseJsonBody(
      Buffer.from(request.bodyBytes.buffer, request.bodyBytes.byteOffset, request.bodyBytes.byteLength),
      options,
    );
  }
  if (!request.body) return parseJsonBody(Buffer.alloc(0), options);

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
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  return parseJsonBody(Buffer.concat(chunks), options);
}

function parseJsonBody(bytes: Buffer, options: { optional?: boolean }): JsonBody {
  const text = bytes.toString("utf8");
  if (text.trim() === "") {
    if (options.optional) return { value: undefined, sha256: EMPTY_SHA256 };
    throw new ApiError("invalid_json", "Request body is required and must be JSON");
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ApiError("invalid_json", `Request body is not valid JSON: ${(error as Error).message}`);
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

const EMPTY_SHA256 = hash("sha256", "", "hex");

function tooLarge(maxBytes: number): ApiError {
  return new ApiError("request_too_large", `Request body exceeds the limit of ${maxBytes} bytes`);
}

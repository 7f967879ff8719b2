import { hash } from "node:crypto";
import { MAX_REQUEST_BODY_BYTES } from "../../config/limits";
import { ApiError } from "../errors";
import type { ApiRequest } from "./api-request";
import { readBodyBytes } from "./read-body-bytes";

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
  const bytes = await readBodyBytes(request, maxBytes);
  if (!bytes) throw tooLarge(maxBytes);
  return parseJsonBody(bytes, options);
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
  if (nestedDeeperThan(text, MAX_JSON_DEPTH)) {
    throw new ApiError(
      "invalid_request",
      `Request body is nested too deeply: arrays and objects may nest at most ${MAX_JSON_DEPTH} levels deep`,
    );
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

/**
 * How deep a body may nest arrays and objects. Far beyond any real request (a JSON Schema of tools rarely passes
 * 20), and far below the depth at which JSON.stringify, which prices tools and schemas and sends the body upstream,
 * overflows the stack (about 10,000): a body nested that deep is refused as a 400 before any quote, not a 500.
 */
export const MAX_JSON_DEPTH = 128;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/**
 * Whether valid JSON (JSON.parse accepted it) nests deeper than `limit`: brackets and braces counted outside strings,
 * each string skipped to its closing quote by the engine's own search, so that a body of long texts costs little
 * (under a microsecond for a 1 KB request, about a tenth of JSON.parse's time at most). A body too short to
 * hold limit + 1 pairs is not read.
 */
function nestedDeeperThan(text: string, limit: number): boolean {
  if (text.length < 2 * (limit + 1)) return false;
  let depth = 0;
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (code === QUOTE) at = closingQuote(text, at);
    else if (code === OPEN_BRACKET || code === OPEN_BRACE) {
      if (++depth > limit) return true;
    } else if (code === CLOSE_BRACKET || code === CLOSE_BRACE) depth--;
  }
  return false;
}

/** The index of the quote that closes the string opened at `open` (one preceded by an even run of backslashes). */
function closingQuote(text: string, open: number): number {
  let at = open;
  for (;;) {
    at = text.indexOf('"', at + 1);
    if (at < 0) return text.length;
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
}

function tooLarge(maxBytes: number): ApiError {
  return new ApiError("request_too_large", `Request body exceeds the limit of ${maxBytes} bytes`);
}

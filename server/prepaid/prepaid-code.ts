import { hash, randomBytes, timingSafeEqual } from "node:crypto";
import { ApiError } from "../core/errors";
import type { ApiRequest } from "../http/api-request";
import { bearerToken } from "../http/bearer-token";

/** Every prepaid code starts with this, so it is recognisable in a config file or a leaked log. */
export const PREPAID_CODE_PREFIX = "paysvc_pk_";

/** A new bearer secret: the prefix and 256 random bits, base64url. */
export function newPrepaidCode(): string {
  return `${PREPAID_CODE_PREFIX}${randomBytes(32).toString("base64url")}`;
}

/**
 * SHA-256 of a code, hex. One-shot `hash`, not `createHash`: a Hash object is a native object the garbage collector
 * tracks through a weak handle, and one per prepaid request showed in the young generation's pauses.
 */
export function hashPrepaidCode(code: string): string {
  return hash("sha256", code, "hex");
}

function looksLikePrepaidCode(token: string): boolean {
  return token.startsWith(PREPAID_CODE_PREFIX);
}

/** Constant-time comparison of two hex hashes of equal length. */
export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, "hex");
  const right = Buffer.from(b, "hex");
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * The prepaid code a request is billed to, or undefined for an x402 request. Any other bearer is not an error:
 * the official SDK always sends one (x402 payers configure a placeholder such as "x402").
 */
export function prepaidCodeFor(request: ApiRequest): string | undefined {
  const token = bearerToken(request);
  return token && looksLikePrepaidCode(token) ? token : undefined;
}

/** The answer to a code that names no usable key (401), wherever a code is presented. */
export function unknownPrepaidKey(): ApiError {
  return new ApiError("invalid_api_key", "Incorrect prepaid key provided: no such key.");
}

import { hash, randomBytes, timingSafeEqual } from "node:crypto";
import { PREPAID_CODE_PREFIX } from "../auth/key-principal";
import { ApiError } from "../core/errors";

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

/** Constant-time comparison of two hex hashes of equal length. */
export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, "hex");
  const right = Buffer.from(b, "hex");
  return left.length === right.length && timingSafeEqual(left, right);
}

/** The answer to a code that names no usable key (401), wherever a code is presented. */
export function unknownPrepaidKey(): ApiError {
  return new ApiError("invalid_api_key", "Incorrect prepaid key provided: no such key.");
}

import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { ApiRequest } from "../http/api-request";

/** Every prepaid code starts with this, so it is recognisable in a config file or a leaked log. */
export const PREPAID_CODE_PREFIX = "paysvc_pk_";

/** A new bearer secret: the prefix and 256 random bits, base64url. */
export function newPrepaidCode(): string {
  return `${PREPAID_CODE_PREFIX}${randomBytes(32).toString("base64url")}`;
}

export function hashPrepaidCode(code: string): string {
  return createHash("sha256").update(code, "utf8").digest("hex");
}

export function looksLikePrepaidCode(token: string): boolean {
  return token.startsWith(PREPAID_CODE_PREFIX);
}

/** Constant-time comparison of two hex hashes of equal length. */
export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, "hex");
  const right = Buffer.from(b, "hex");
  return left.length === right.length && timingSafeEqual(left, right);
}

/** The bearer token of a request, if any. */
export function bearerToken(request: ApiRequest): string | undefined {
  const header = request.headers.get("authorization");
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1];
}

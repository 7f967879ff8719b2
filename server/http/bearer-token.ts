import type { ApiRequest } from "./api-request";

/** The bearer token of a request, if any. */
export function bearerToken(request: ApiRequest): string | undefined {
  const header = request.headers.get("authorization");
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1];
}

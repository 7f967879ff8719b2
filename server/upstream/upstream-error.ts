import { randomBytes } from "node:crypto";
import { logEvent } from "../core/log";

/** Why an upstream call failed; every kind means the work was not done and the payer must not be charged. */
export type UpstreamFailure = "status" | "timeout" | "network" | "protocol";

export class UpstreamError extends Error {
  constructor(
    readonly failure: UpstreamFailure,
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = "UpstreamError";
  }
}

/**
 * A provider's refusal, whose words stay in our log: an error body may name the operator's organization, project or
 * key. The log line and the error's message (which callers see) share a request id, so a caller's report finds it.
 */
export function providerRefusal(summary: string, detail: string, origin: string, status?: number): UpstreamError {
  const requestId = `req_${randomBytes(8).toString("hex")}`;
  logEvent("warn", "provider_error", {
    request_id: requestId,
    provider: origin,
    summary,
    detail: detail.slice(0, 2000),
  });
  return new UpstreamError(
    "status",
    `${summary} (request id ${requestId}; the provider's answer is in the service's log)`,
    status,
  );
}

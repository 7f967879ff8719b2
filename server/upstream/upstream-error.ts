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

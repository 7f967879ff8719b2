import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import { listen, readBody, sendJson, type JsonHttpServer } from "../../cli/lib/json-http-server";
import { targetCredentials } from "./facilitator-proxy";

/** What the front does with a call: pass it on; never answer; answer 500 itself; pass it on and answer late. */
export type Fault =
  { kind: "none" } | { kind: "hang" } | { kind: "error500" } | { kind: "late"; answerAfterMs: number };
type Operation = "verify" | "settle" | "supported";

/**
 * A facilitator's front door, at a port of its own, in front of the real embedded facilitator: it passes calls on,
 * or fails them as a facilitator in trouble does (per operation: hangs, a 500, a late answer after passing the call
 * on), or stops listening altogether (connection refused) and listens again on the same port. `authorize` sees
 * each request first and may refuse it with 401 (a reason), as an authenticating facilitator does. Every request's
 * headers are kept, and the calls passed on are counted.
 */
export async function startFacilitatorFront(
  target: string,
  options: {
    authorize?: (request: IncomingMessage, path: string) => string | undefined;
    /** The credentials of the facilitator behind (`Name: value`): the shared stack's when it is the target. */
    authHeader?: string;
  } = {},
) {
  const faults: Record<Operation, Fault> = {
    verify: { kind: "none" },
    settle: { kind: "none" },
    supported: { kind: "none" },
  };
  const passed: Record<Operation, number> = { verify: 0, settle: 0, supported: 0 };
  const failed: Record<Operation, number> = { verify: 0, settle: 0, supported: 0 };
  const refused: string[] = [];
  const credentials = targetCredentials(target, options.authHeader);
  const headers: IncomingHttpHeaders[] = [];
  const hanging: (() => void)[] = [];
  const handler = async (request: IncomingMessage, response: Parameters<Parameters<typeof listen>[0]>[1]) => {
    const body = request.method === "POST" ? await readBody(request) : undefined;
    const path = (request.url ?? "/").split("?")[0]!;
    headers.push(request.headers);
    const problem = options.authorize?.(request, path);
    if (problem) {
      refused.push(problem);
      return sendJson(response, 401, { errorType: "unauthorized", errorMessage: problem });
    }
    const operation = path.slice(1) as Operation;
    const fault = faults[operation] ?? { kind: "none" };
    if (fault.kind === "hang" || fault.kind === "error500") failed[operation] += 1;
    if (fault.kind === "hang") {
      hanging.push(() => response.destroy());
      return;
    }
    if (fault.kind === "error500") return sendJson(response, 500, { error: "internal error" });
    const answer = await fetch(`${target}${path}`, {
      method: request.method,
      headers: { ...(body && { "content-type": "application/json" }), ...credentials },
      body: body && new Uint8Array(body),
    });
    const json = await answer.json();
    if (operation in passed) passed[operation] += 1;
    if (fault.kind === "late") await new Promise((resolve) => setTimeout(resolve, fault.answerAfterMs));
    if (!response.destroyed) sendJson(response, answer.status, json);
  };
  let server: JsonHttpServer | undefined = await listen(handler, 0, "facilitator front");
  const port = Number(new URL(server.url).port);
  const url = server.url;
  const close = async () => {
    for (const end of hanging.splice(0)) end();
    await server?.stop();
    server = undefined;
  };
  return {
    url,
    passed,
    /** The calls it hung up on or answered 500, per operation. */
    failed,
    /** The reasons of the requests refused with 401. */
    refused,
    headers,
    /** How each operation fails from now on (`none`: passed on). */
    setFault(operation: Operation | "all", fault: Fault) {
      for (const name of operation === "all" ? (Object.keys(faults) as Operation[]) : [operation]) faults[name] = fault;
    },
    /** Stops listening: connections are refused until `serve`. */
    refuse: close,
    /** Listens again, on the same port. */
    async serve() {
      server ??= await listen(handler, port, "facilitator front");
    },
    stop: close,
  };
}

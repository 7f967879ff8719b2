import { headerAuth } from "../../cli/lib/facilitator-server";
import { listen, readBody, sendJson } from "../../cli/lib/json-http-server";
import { stack } from "./payments";

/**
 * What a front or proxy sends the facilitator behind it: a stack's facilitator serves only its own deployment,
 * whose part the test's front plays. `authHeader` (`Name: value`): the shared stack's when it is the target.
 */
export function targetCredentials(target: string, authHeader?: string): Record<string, string> {
  const line = authHeader ?? (target === stack().facilitatorUrl ? stack().facilitatorAuthHeader : undefined);
  if (!line) return {};
  const { name, value } = headerAuth(line);
  return { [name]: value };
}

/**
 * What the proxy does with POST /settle: forward it, hold it `holdMs` and then forward it, never forward it, hold
 * it until the test opens the gate (`openGate`), so that something can happen on chain in between, or refuse those
 * whose request body `refuse` picks (as a facilitator refuses one) and forward the others.
 */
export type SettleMode =
  | { kind: "forward" }
  | { kind: "hold"; holdMs: number }
  | { kind: "drop" }
  | { kind: "gate" }
  | { kind: "refuse"; refuse: (body: Record<string, unknown>) => boolean };

/**
 * A facilitator in front of the real one, for settlements that time out: every call is forwarded, except that
 * /settle follows `mode` and /supported lists the kinds `setSupported` keeps; /verify and /settle may each be
 * delayed, as a real network's facilitator is (`setDelays`). `forwarded` holds the real facilitator's answers to the
 * settles it passed on, in order; `received` counts the verifies and settles asked for, `traceparents` keeps the
 * trace context each of them carried.
 */
export async function startFacilitatorProxy(target: string, authHeader?: string) {
  let mode: SettleMode = { kind: "forward" };
  let delays = { verifyMs: 0, settleMs: 0 };
  const received = { verify: 0, settle: 0 };
  const traceparents: (string | undefined)[] = [];
  let onlyKinds: (kind: { x402Version: number; network: string }) => boolean = () => true;
  const forwarded: Promise<Record<string, unknown>>[] = [];
  const dropped: (() => void)[] = [];
  /** The settles waiting at the gate: each one's request body, and what releases it. */
  const gated: { body: string; release: () => void }[] = [];
  const credentials = targetCredentials(target, authHeader);
  const forward = async (method: string, path: string, body: Buffer | undefined) => {
    const answer = await fetch(`${target}${path}`, {
      method,
      headers: { ...(body && { "content-type": "application/json" }), ...credentials },
      body: body && new Uint8Array(body),
    });
    return { status: answer.status, json: (await answer.json()) as Record<string, unknown> };
  };
  const server = await listen(
    async (request, response) => {
      const body = request.method === "POST" ? await readBody(request) : undefined;
      const path = request.url ?? "/";
      if (path === "/verify" || path === "/settle") {
        received[path === "/verify" ? "verify" : "settle"] += 1;
        traceparents.push(request.headers.traceparent as string | undefined);
        const delay = path === "/verify" ? delays.verifyMs : delays.settleMs;
        if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
      }
      if (path === "/settle" && mode.kind === "drop") {
        // Never answered: the app gives up at its timeout; the connection is closed when the proxy stops.
        dropped.push(() => response.destroy());
        return;
      }
      if (path === "/settle" && mode.kind === "refuse" && mode.refuse(JSON.parse(body?.toString("utf8") ?? "{}"))) {
        const errorReason = "refused_by_test_proxy";
        sendJson(response, 200, { success: false, errorReason, transaction: "", network: "" });
        return;
      }
      if (path === "/settle" && (mode.kind === "hold" || mode.kind === "gate")) {
        const held =
          mode.kind === "hold"
            ? new Promise<void>((resolve) => setTimeout(resolve, (mode as { holdMs: number }).holdMs))
            : new Promise<void>((resolve) => gated.push({ body: body?.toString("utf8") ?? "", release: resolve }));
        const settled = held.then(() => forward("POST", path, body));
        forwarded.push(settled.then(({ json }) => json));
        const { status, json } = await settled;
        if (!response.destroyed) sendJson(response, status, json);
        return;
      }
      const { status, json } = await forward(request.method ?? "GET", path, body);
      if (path === "/settle") forwarded.push(Promise.resolve(json));
      if (path === "/supported") json.kinds = (json.kinds as Parameters<typeof onlyKinds>[0][]).filter(onlyKinds);
      sendJson(response, status, json);
    },
    0,
    "facilitator proxy",
  );
  return {
    url: server.url,
    setMode(next: SettleMode) {
      mode = next;
    },
    /** Holds each /verify and /settle this long before passing it on. */
    setDelays(next: { verifyMs: number; settleMs: number }) {
      delays = next;
    },
    received,
    traceparents,
    /** Lists in /supported only the kinds `keep` keeps (a facilitator without x402 v1, say). */
    setSupported(keep: typeof onlyKinds) {
      onlyKinds = keep;
    },
    /** The real facilitator's answer to the last settle passed on, once it came. */
    lastForwarded: () => forwarded.at(-1),
    /** Resolves once a settle of `payer`'s payment waits at the gate. */
    async settleAtGate(payer: string, withinMs = 10_000) {
      const ofPayer = () => gated.some((entry) => entry.body.toLowerCase().includes(payer.toLowerCase()));
      for (const deadline = Date.now() + withinMs; !ofPayer();) {
        if (Date.now() > deadline) throw new Error(`no settle of ${payer} reached the gate`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    /** Lets every settle waiting at the gate through. */
    openGate() {
      for (const entry of gated.splice(0)) entry.release();
    },
    stop: async () => {
      for (const close of dropped) close();
      await server.stop();
    },
  };
}

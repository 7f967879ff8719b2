import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { afterEach, describe, expect, it } from "vitest";
import { AuthenticatedFacilitatorClient } from "./facilitator-auth";

const servers: Server[] = [];

/** A real HTTP server on `host`; `answer` writes each response. */
async function serve(
  host: string,
  answer: (path: string, respond: (status: number, headers: Record<string, string>, body?: string) => void) => void,
) {
  const received: { path: string; headers: IncomingHttpHeaders }[] = [];
  const server = createServer((request, response) => {
    received.push({ path: request.url ?? "", headers: request.headers });
    request.resume();
    request.on("end", () =>
      answer(request.url ?? "", (status, headers, body) => response.writeHead(status, headers).end(body)),
    );
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { url: `http://${host}:${(server.address() as AddressInfo).port}`, received };
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

const payload = { x402Version: 2, payload: {}, accepted: {} } as unknown as PaymentPayload;
const requirements = { scheme: "exact", network: "eip155:137" } as unknown as PaymentRequirements;

describe("the facilitator client", () => {
  it("does not follow a redirect: the static credential header never reaches the other host", async () => {
    // Another host: 127.0.0.2 is this machine too, but not the facilitator's address.
    const elsewhere = await serve("127.0.0.2", (_, respond) =>
      respond(200, { "content-type": "application/json" }, JSON.stringify({ isValid: true })),
    );
    const facilitator = await serve("127.0.0.1", (path, respond) =>
      respond(307, { location: `${elsewhere.url}${path}` }),
    );
    const client = new AuthenticatedFacilitatorClient(
      { url: facilitator.url, timeoutMs: 5000 },
      { kind: "header", name: "x-secret-key", value: "the-operators-secret" },
    );
    for (const call of [
      () => client.verify(payload, requirements),
      () => client.settle(payload, requirements),
      () => client.getSupported(),
    ]) {
      await expect(call()).rejects.toThrow(/failed \(307\): redirects are not followed/);
    }
    expect(facilitator.received.map((request) => request.headers["x-secret-key"])).toEqual([
      "the-operators-secret",
      "the-operators-secret",
      "the-operators-secret",
    ]);
    expect(elsewhere.received).toEqual([]);
  });

  it("answers as the official client does: a verdict with an error status, and a list", async () => {
    const facilitator = await serve("127.0.0.1", (path, respond) =>
      path === "/verify"
        ? respond(
            400,
            { "content-type": "application/json" },
            JSON.stringify({ isValid: false, invalidReason: "expired" }),
          )
        : respond(
            200,
            { "content-type": "application/json" },
            JSON.stringify({ kinds: [{ x402Version: 2, scheme: "exact", network: "eip155:137" }] }),
          ),
    );
    const client = new AuthenticatedFacilitatorClient({ url: facilitator.url }, { kind: "none" });
    await expect(client.verify(payload, requirements)).rejects.toMatchObject({
      statusCode: 400,
      invalidReason: "expired",
    });
    expect(await client.getSupported()).toEqual({
      kinds: [{ x402Version: 2, scheme: "exact", network: "eip155:137" }],
      extensions: [],
      signers: {},
    });
  });
});

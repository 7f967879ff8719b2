import type { IncomingHttpHeaders } from "node:http";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listen, readBody, type JsonHttpServer } from "../cli/lib/json-http-server";
import { cdpApiKey, cdpTokenProblem } from "./support/cdp-keys";
import { startExtraApp } from "./support/extra-app";
import { startFacilitatorFront } from "./support/facilitator-front";
import { balances, chatBody, officialPayment, payingOpenAI, postJson, quote, stack } from "./support/payments";
import { paysvc } from "./support/run-paysvc";

const PATH = "/v1/chat/completions";
const payer = () => stack().payers[4]!;
const directory = mkdtempSync(join(tmpdir(), "paysvc-credentials-"));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

/** What `paysvc start --check` needs besides the facilitator: an operator's pay-to, a provider and a database. */
const operator = () => ({
  NETWORK: "eip155:137",
  PAY_TO: privateKeyToAccount(generatePrivateKey()).address,
  UPSTREAM_BASE_URL: stack().upstreamBaseUrl,
  DATABASE_URL: `file:${join(directory, "check.sqlite")}`,
});

describe("a facilitator that wants CDP's JWT on every call", () => {
  const key = cdpApiKey("ed25519");
  const es256 = cdpApiKey("es256");
  let front: Awaited<ReturnType<typeof startFacilitatorFront>>;
  let app: Awaited<ReturnType<typeof startExtraApp>>;
  const accepted: string[] = [];
  beforeAll(async () => {
    // Either key is CDP's own for this facilitator; everything else is refused with 401.
    front = await startFacilitatorFront(stack().facilitatorUrl, {
      authorize: (request, path) => {
        const call = { method: request.method!, host: request.headers.host!, path };
        const problems = [key, es256].map((candidate) =>
          cdpTokenProblem(request.headers.authorization, candidate, call),
        );
        if (problems.some((problem) => problem === undefined)) {
          accepted.push(`${call.method} ${path}`);
          return undefined;
        }
        return problems.join("; ");
      },
    });
    app = await startExtraApp({
      FACILITATOR_URL: front.url,
      FACILITATOR_AUTH: "cdp",
      CDP_API_KEY_ID: key.id,
      CDP_API_KEY_SECRET: key.secret,
    });
  });
  afterAll(async () => {
    await app?.stop();
    await front?.stop();
  });

  it("sends a valid token with every supported, verify and settle call, and the payment goes through", async () => {
    const body = chatBody("paid through an authenticated facilitator");
    const price = BigInt((await quote(PATH, body, app.url)).accepts[0]!.amount);
    const before = await balances(payer().address);
    const completion = await payingOpenAI(payer().privateKey, `${app.url}/v1`).chat.completions.create(body as never);
    expect(completion.choices[0]!.message.content).toContain("authenticated facilitator");
    expect(before.payer - (await balances(payer().address)).payer).toBe(price);
    expect(front.refused).toEqual([]);
    expect(accepted).toEqual(expect.arrayContaining(["GET /supported", "POST /verify", "POST /settle"]));
    // The official SDK's own Authorization header went to us, not to the facilitator: the facilitator's is a JWT.
    for (const headers of front.headers) expect(headers.authorization).toMatch(/^Bearer ey/);
  });

  it("`start --check` takes an ES256 key in CDP's PEM and lists what the facilitator supports", async () => {
    const env = {
      ...operator(),
      FACILITATOR_URL: front.url,
      FACILITATOR_AUTH: "cdp",
      CDP_API_KEY_ID: es256.id,
      CDP_API_KEY_SECRET: es256.secret,
    };
    const checked = await paysvc(["start", "--check"], 60_000, env);
    expect(checked.code, checked.stdout + checked.stderr).toBe(0);
    expect(checked.stdout).toMatch(
      /facilitator facilitator \(http:\/\/127\.0\.0\.1:\d+; credentials: CDP API key .*\(JWT\)\): eip155:137: exact yes, upto yes/,
    );
    expect(checked.stdout).not.toContain(es256.secret.split("\n")[1]!);
  });

  it("a wrong key: `start --check` names the rejected credentials, and paid calls get 503 with nothing taken", async () => {
    const wrong = cdpApiKey("ed25519");
    const env = {
      FACILITATOR_URL: front.url,
      FACILITATOR_AUTH: "cdp",
      CDP_API_KEY_ID: wrong.id,
      CDP_API_KEY_SECRET: wrong.secret,
    };
    const checked = await paysvc(["start", "--check"], 60_000, { ...operator(), ...env });
    expect(checked.stdout).toMatch(/facilitator facilitator .*: credentials rejected \(401\)/);
    expect(checked.stderr).toContain("paysvc start: no facilitator (facilitator) lists exact payments on eip155:137");
    expect(checked.code).toBe(2);

    const refusedApp = await startExtraApp(env);
    try {
      const body = chatBody("a wrong facilitator key");
      // The quote stands (EVM exact terms need no facilitator); paying waits for one that takes the credentials.
      const quoted = await postJson(PATH, body, {}, refusedApp.url);
      expect(quoted.status).toBe(402);
      // A payment signed for this deployment's quote, presented where the facilitator refuses us.
      const signature = await officialPayment(payer().privateKey, await quote(PATH, body, refusedApp.url));
      const before = await balances(payer().address);
      const paid = await postJson(PATH, body, { "PAYMENT-SIGNATURE": signature }, refusedApp.url);
      expect(paid.status).toBe(503);
      expect(await balances(payer().address)).toEqual(before);
      const health = await (await fetch(`${refusedApp.url}/health`)).json();
      // Why is in the log and on the operator's page; the public answer says which, not why.
      expect(health.checks.facilitators.facilitator).toMatchObject({ status: "down" });
      expect(health.checks.facilitators.facilitator).not.toHaveProperty("error");
    } finally {
      await refusedApp.stop();
    }
  });

  it("a malformed key is refused at start with one line naming the variable", async () => {
    const env = { ...operator(), FACILITATOR_URL: front.url, FACILITATOR_AUTH: "cdp", CDP_API_KEY_ID: key.id };
    const checked = await paysvc(["start", "--check"], 60_000, { ...env, CDP_API_KEY_SECRET: "bm90IGEga2V5" });
    expect(checked.code).toBe(2);
    expect(checked.stderr.trim().split("\n")).toEqual([
      expect.stringMatching(/^paysvc start: CDP_API_KEY_SECRET: not a CDP API key secret/),
    ]);
    expect(checked.stderr).not.toContain("bm90IGEga2V5");
  });
});

describe("a facilitator that wants a static header", () => {
  const SECRET = `tw-${"5ecret".repeat(6)}`;
  let front: Awaited<ReturnType<typeof startFacilitatorFront>>;
  let provider: JsonHttpServer;
  let app: Awaited<ReturnType<typeof startExtraApp>>;
  const providerHeaders: IncomingHttpHeaders[] = [];
  const log: string[] = [];
  beforeAll(async () => {
    front = await startFacilitatorFront(stack().facilitatorUrl, {
      authorize: (request) => (request.headers["x-secret-key"] === SECRET ? undefined : "no x-secret-key"),
    });
    // The provider, behind a front that keeps the headers it is sent.
    const upstream = new URL(stack().upstreamBaseUrl);
    provider = await listen(
      async (request, response) => {
        providerHeaders.push(request.headers);
        const body = request.method === "POST" ? await readBody(request) : undefined;
        const answer = await fetch(`${upstream.origin}${request.url}`, {
          method: request.method,
          headers: { "content-type": "application/json" },
          body: body && new Uint8Array(body),
        });
        response.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "text/plain" });
        response.end(Buffer.from(await answer.arrayBuffer()));
      },
      0,
      "recording provider",
    );
    app = await startExtraApp(
      {
        FACILITATOR_URL: front.url,
        FACILITATOR_AUTH_HEADER: `x-secret-key: ${SECRET}`,
        UPSTREAM_BASE_URL: `${provider.url}${upstream.pathname}`,
        METRICS_TOKEN: "metrics-token-for-the-test-0123456789",
      },
      { onLogLine: (line) => log.push(line) },
    );
  });
  afterAll(async () => {
    await app?.stop();
    await front?.stop();
    await provider?.stop();
  });

  it("reaches the facilitator on every call, and nothing else: not the provider, the logs, /health or /metrics", async () => {
    const body = chatBody("paid through a facilitator with a secret header");
    const price = BigInt((await quote(PATH, body, app.url)).accepts[0]!.amount);
    const before = await balances(payer().address);
    await payingOpenAI(payer().privateKey, `${app.url}/v1`).chat.completions.create(body as never);
    expect(before.payer - (await balances(payer().address)).payer).toBe(price);
    expect(front.refused).toEqual([]);
    expect(front.headers.length).toBeGreaterThanOrEqual(3);
    expect(providerHeaders.length).toBeGreaterThan(0);
    const health = await (await fetch(`${app.url}/health`)).text();
    const metrics = await (
      await fetch(`${app.url}/metrics`, { headers: { authorization: "Bearer metrics-token-for-the-test-0123456789" } })
    ).text();
    expect(metrics).toContain(
      'paysvc_facilitator_requests_total{facilitator="facilitator",operation="settle",outcome="ok"',
    );
    for (const text of [JSON.stringify(providerHeaders), log.join("\n"), health, metrics]) {
      expect(text).not.toContain(SECRET);
    }
  });

  it("`start --check` names the header, never its value; a malformed one is refused naming the variable", async () => {
    const env = { ...operator(), FACILITATOR_URL: front.url, FACILITATOR_AUTH_HEADER: `x-secret-key: ${SECRET}` };
    const checked = await paysvc(["start", "--check", "--json"], 60_000, env);
    expect(checked.code, checked.stderr).toBe(0);
    expect(JSON.parse(checked.stdout).facilitators).toEqual([
      expect.objectContaining({ name: "facilitator", auth: "header x-secret-key" }),
    ]);
    expect(checked.stdout + checked.stderr).not.toContain(SECRET);
    const malformed = await paysvc(["start", "--check"], 60_000, { ...env, FACILITATOR_AUTH_HEADER: SECRET });
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toMatch(/^paysvc start: FACILITATOR_AUTH_HEADER: must be one header as "Name: value"/);
    expect(malformed.stderr).not.toContain(SECRET);
  });
});

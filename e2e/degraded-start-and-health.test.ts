import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../cli/dev-stack/next-app";
import { startLocalUpstream, type LocalUpstream } from "../cli/dev-stack/local-upstream";
import { newPrepaidCode } from "../server/prepaid/prepaid-code";
import { openStorage } from "../server/storage/open-storage";
import { chatBody, officialPayment, payingOpenAI, postJson, quote, stack, usdcBalance } from "./support/payments";
import { startService, stopService } from "./support/paysvc-service";
import { startOwnFacilitator } from "./support/own-facilitator";

/**
 * Items 5 and 6 of issue 48: `paysvc start` while its only facilitator refuses connections starts degraded (quotes,
 * prepaid and free calls served, paid calls 503 with Retry-After and nothing charged) and takes payments once the
 * facilitator answers, without a restart; a flood of /health asks each dependency at most once per period.
 */

const directory = mkdtempSync(join(tmpdir(), "paysvc-degraded-"));
// An operator's own address and facilitator: these payments are not the shared ledger's.
const PAY_TO = privateKeyToAccount(generatePrivateKey()).address;
let provider: LocalUpstream;
let facilitator: Awaited<ReturnType<typeof startOwnFacilitator>>;

const HOP_BY_HOP = new Set(["host", "connection", "content-length", "transfer-encoding", "keep-alive", "expect"]);

/** A real HTTP server passing every request on to `target`, counting them by path; on `port` (0: any). */
async function countingProxy(target: string, port = 0) {
  const counts = new Map<string, number>();
  const server: Server = createServer((request, response) => {
    const path = request.url ?? "/";
    counts.set(path, (counts.get(path) ?? 0) + 1);
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", async () => {
      const headers = Object.fromEntries(
        Object.entries(request.headers).filter(([name]) => !HOP_BY_HOP.has(name)),
      ) as Record<string, string>;
      const body = chunks.length > 0 ? new Uint8Array(Buffer.concat(chunks)) : undefined;
      try {
        const answer = await fetch(`${target}${path}`, { method: request.method, headers, body });
        const bytes = Buffer.from(await answer.arrayBuffer());
        response.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "text/plain" });
        response.end(bytes);
      } catch {
        response.writeHead(502).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const address = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}`,
    count: (path: string) => counts.get(path) ?? 0,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

beforeAll(async () => {
  provider = await startLocalUpstream({ port: 0 });
  facilitator = await startOwnFacilitator(PAY_TO);
});

afterAll(async () => {
  await facilitator?.stop();
  await provider?.stop();
  rmSync(directory, { recursive: true, force: true });
});

describe("paysvc start while its only facilitator refuses connections", { timeout: 180_000 }, () => {
  it("starts, serves quotes, prepaid and free calls, answers paid calls 503, and takes payments once it is up", async () => {
    const facilitatorPort = await freePort();
    const databaseUrl = `file:${join(directory, "degraded.sqlite")}`;
    // A prepaid key already sold (its purchase is another test's subject), in the deployment's own database.
    const code = newPrepaidCode();
    const storage = await openStorage(databaseUrl);
    await storage.prepaidKeys.issue(code, "vendor-a/gpt-6-luna", 100_000, undefined);
    await storage.close();
    const env = {
      NETWORK: "eip155:137",
      PAY_TO,
      FACILITATOR_URL: `http://127.0.0.1:${facilitatorPort}`,
      FACILITATOR_AUTH_HEADER: facilitator.authHeader,
      UPSTREAM_BASE_URL: `${provider.url}/v1`,
      DATABASE_URL: databaseUrl,
      PORT: String(await freePort()),
      HOST: "127.0.0.1",
      RECONCILE_INTERVAL_SECONDS: "0",
      FACILITATOR_COOLDOWN_SECONDS: "1",
      HEALTH_PROBE_SECONDS: "1",
    };
    const service = await startService(env);
    let front: Awaited<ReturnType<typeof countingProxy>> | undefined;
    try {
      expect(service.log.join("")).toMatch(/no facilitator answers now: starting degraded/);
      const health = await fetch(`${service.url}/health`);
      expect(health.status).toBe(200);
      const state = await health.json();
      expect(state).toMatchObject({ status: "degraded", down: ["facilitator facilitator"] });
      expect(state.checks.facilitators.facilitator).not.toHaveProperty("error");
      expect(JSON.stringify(state)).not.toContain(String(facilitatorPort));

      const prepaid = new OpenAI({ apiKey: code, baseURL: `${service.url}/v1`, maxRetries: 0 });
      const served = await prepaid.chat.completions.create(chatBody("prepaid while no facilitator answers") as never);
      expect(served.choices).toHaveLength(1);
      const free = await postJson("/v1/embeddings", { model: "anything", input: "no facilitator" }, {}, service.url);
      expect(free.status).toBe(200);

      // The quote stands (EVM exact terms need no facilitator); paying it waits for one, and nothing is taken.
      const body = chatBody("paid while no facilitator answers");
      const offered = await quote("/v1/chat/completions", body, service.url);
      const payer = stack().payers[4]!;
      const signature = await officialPayment(payer.privateKey, offered);
      const before = await usdcBalance(payer.address);
      const refused = await postJson("/v1/chat/completions", body, { "PAYMENT-SIGNATURE": signature }, service.url);
      expect(refused.status).toBe(503);
      expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
      expect((await refused.json()).error.code).toBe("facilitator_unavailable");
      expect(await usdcBalance(payer.address)).toBe(before);

      // The facilitator comes up on its address: paid calls work, the same process all along.
      front = await countingProxy(facilitator.url, facilitatorPort);
      // Health says so within its probe period; its breaker, opened by the refused calls, lets a call try after
      // its cooldown (what Retry-After covers).
      await expect
        .poll(
          async () => {
            const { status, checks } = await (await fetch(`${service.url}/health`)).json();
            return `${status} ${checks.facilitators.facilitator.breaker}`;
          },
          { timeout: 30_000 },
        )
        .toMatch(/^ok (closed|half_open)$/);
      const paidBody = chatBody("paid once the facilitator is back");
      const quoted = BigInt((await quote("/v1/chat/completions", paidBody, service.url)).accepts[0]!.amount);
      const payTo = await usdcBalance(PAY_TO);
      const completion = await payingOpenAI(payer.privateKey, `${service.url}/v1`).chat.completions.create(
        paidBody as never,
      );
      expect(completion.choices).toHaveLength(1);
      expect((await usdcBalance(PAY_TO)) - payTo).toBe(quoted);
      expect(service.child.exitCode).toBeNull();
    } catch (error) {
      console.error(service.log.join(""));
      throw error;
    } finally {
      expect(await stopService(service)).toBe(0);
      await front?.stop();
    }
  });
});

describe("a flood of /health", { timeout: 120_000 }, () => {
  it("asks each facilitator and provider at most once per period", async () => {
    const facilitatorFront = await countingProxy(facilitator.url);
    const providerFront = await countingProxy(provider.url);
    const env = {
      NETWORK: "eip155:137",
      PAY_TO,
      FACILITATOR_URL: facilitatorFront.url,
      FACILITATOR_AUTH_HEADER: facilitator.authHeader,
      UPSTREAM_BASE_URL: `${providerFront.url}/v1`,
      DATABASE_URL: `file:${join(directory, "health.sqlite")}`,
      PORT: String(await freePort()),
      HOST: "127.0.0.1",
      RECONCILE_INTERVAL_SECONDS: "0",
      // Longer than the flood takes on a loaded machine: the count is per period, and one period covers it all.
      HEALTH_PROBE_SECONDS: "600",
      // The flood's thousand connections come from this one address: what is tested here is the probe's cache, not
      // the bound on one address's connections (server/http/app-server.test.ts).
      MAX_CONNECTIONS_PER_ADDRESS: "2000",
    };
    const service = await startService(env);
    try {
      const supportedBefore = facilitatorFront.count("/supported");
      const modelsBefore = providerFront.count("/v1/models");
      const answers = await Promise.all(
        Array.from({ length: 1000 }, () => fetch(`${service.url}/health`).then((response) => response.status)),
      );
      expect(new Set(answers)).toEqual(new Set([200]));
      // startService's own readiness poll may have made the period's one probe already.
      expect(facilitatorFront.count("/supported") - supportedBefore).toBeLessThanOrEqual(1);
      expect(providerFront.count("/v1/models") - modelsBefore).toBeLessThanOrEqual(1);
      expect(facilitatorFront.count("/supported")).toBeGreaterThanOrEqual(1);
    } finally {
      expect(await stopService(service)).toBe(0);
      await facilitatorFront.stop();
      await providerFront.stop();
    }
  });
});

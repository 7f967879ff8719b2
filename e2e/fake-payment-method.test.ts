import { createServer, type Server } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadServiceConfig } from "../config/service-config";
import { createAppContext, type AppContext } from "../server/context/app-context";
import { appRoutes } from "../server/app-routes";
import type { PaymentMethod } from "../server/billing/payment-methods";
import { catalogOf } from "../server/endpoints/endpoint-catalog";
import { endpointsFor } from "../server/endpoints";
import { jsonAnswer } from "../server/http/api-answer";
import { nodeHandler } from "../server/http/node-handler";
import { Router } from "../server/http/router";
import type { PaymentKind } from "../server/metrics/service-metrics";
import { chatBody, stack } from "./support/payments";

/**
 * A payment method that exists only here: a voucher in `X-Test-Voucher` ("good" pays, anything else is refused),
 * offered in the 402 as `X-Test-Voucher-Offer` with the call's price. Registered on an app built in this process
 * over the shared stack's chain, facilitator and provider; nothing outside this file knows of it.
 */
const served: string[] = [];
const testVoucher: PaymentMethod<string> = {
  name: "test-voucher",
  howToPay: "send X-Test-Voucher: good",
  credential: (_endpoint, request) => request.headers.get("x-test-voucher") ?? undefined,
  challenge: (_call, priced) => ({ headers: { "X-Test-Voucher-Offer": `amount=${priced.amount}` } }),
  async authorize(call, voucher, terms) {
    const priced = await terms.priced();
    if (voucher !== "good") throw terms.refuse(priced, "payment_rejected", `The voucher ${voucher} is not good`);
    const payment = "test-voucher" as PaymentKind;
    const timings = { upstream: 0 };
    return {
      kind: "granted",
      session: {
        grant: { outputCap: call.quote.tokens?.maxOutput ?? 0, payer: { kind: "wallet", address: "test:voucher" } },
        timings,
        failed: async (error) => {
          throw error;
        },
        finish: async (prepared) => {
          if (prepared.kind !== "json") throw new Error("this voucher pays whole answers only");
          served.push(call.endpoint);
          const answer = jsonAnswer(prepared.body, { headers: { "X-Test-Voucher-Receipt": `paid ${priced.amount}` } });
          return { answer, outcome: "paid", payment, timings };
        },
      },
    };
  },
};

describe("a payment method registered by a test alone", () => {
  let context: AppContext;
  let server: Server;
  let url: string;
  let directory: string;
  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), "paysvc-fake-method-"));
    const { payTo, facilitatorUrl, facilitatorAuthHeader, chainRpcUrl, upstreamBaseUrl } = stack();
    const config = loadServiceConfig({
      NETWORK: "eip155:137",
      PAY_TO: payTo,
      FACILITATOR_URL: facilitatorUrl,
      FACILITATOR_AUTH_HEADER: facilitatorAuthHeader,
      CHAIN_RPC_URL: chainRpcUrl,
      UPSTREAM_BASE_URL: upstreamBaseUrl,
      DATABASE_URL: `file:${join(directory, "app.sqlite")}`,
      RECONCILE_INTERVAL_SECONDS: "0",
    });
    const endpoints = endpointsFor(config.catalog);
    context = await createAppContext(config, catalogOf(endpoints));
    context.payments.register(testVoucher);
    const router = new Router(
      appRoutes(endpoints, context.catalog, () => context),
      () => config.corsOrigins,
    );
    const lifecycle = { drain: context.drain, network: config.network.id };
    server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const handle = nodeHandler(router, url, () => false, lifecycle);
    server.on("request", (request, response) => void handle(request, response));
  });
  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await context?.storage.close();
    rmSync(directory, { recursive: true, force: true });
  });

  const post = (headers: Record<string, string> = {}) =>
    fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(chatBody("Paid by a voucher")),
    });

  it("is offered in the 402 beside x402 and MPP, for the same amount", async () => {
    const response = await post();
    expect(response.status).toBe(402);
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    const amount = JSON.parse(Buffer.from(response.headers.get("payment-required")!, "base64").toString()).accepts[0]
      .amount as string;
    expect(response.headers.get("x-test-voucher-offer")).toBe(`amount=${amount}`);
    expect(response.headers.get("www-authenticate")).toMatch(/^Payment /);
    expect(error.code).toBe("payment_required");
    expect(error.message).toContain("send X-Test-Voucher: good");
  });

  it("authorizes a call, answered by the real work and its receipt", async () => {
    const openai = new OpenAI({
      apiKey: "unused",
      baseURL: `${url}/v1`,
      defaultHeaders: { "X-Test-Voucher": "good" },
      maxRetries: 0,
    });
    const { data, response } = await openai.chat.completions
      .create(chatBody("Paid by a voucher") as OpenAI.ChatCompletionCreateParamsNonStreaming)
      .withResponse();
    expect(data.choices[0]!.message.content).toContain("Paid by a voucher");
    expect(response.headers.get("x-test-voucher-receipt")).toMatch(/^paid \d+$/);
    expect(served).toEqual(["/v1/chat/completions"]);
  });

  it("refuses a bad voucher with the 402 of every method, and serves nothing", async () => {
    const response = await post({ "X-Test-Voucher": "forged" });
    expect(response.status).toBe(402);
    expect(((await response.json()) as { error: { message: string } }).error.message).toBe(
      "The voucher forged is not good",
    );
    expect(response.headers.get("payment-required")).toBeTruthy();
    expect(response.headers.get("x-test-voucher-offer")).toMatch(/^amount=\d+$/);
    expect(served).toHaveLength(1);
  });
});

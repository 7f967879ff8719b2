import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { encodePaymentRequiredHeader } from "@x402/core/http";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { ModelCatalog } from "../../config/catalog/model-catalog";
import { loadPriceCatalog } from "../../config/service-config";
import { getNetwork } from "../../networks";
import { quoteRequest } from "../../server/endpoints/quote-request";
import { listModels } from "../../server/models/list-models";
import { checkOrigin } from "./check-origin";

const network = getNetwork("eip155:137");
const PAY_TO = "0x000000000000000000000000000000000000dEaD";
const directory = mkdtempSync(join(tmpdir(), "paysvc-health-"));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const route = { provider: "acme", base_url: "https://llm.acme.example/v1", model: "m" };
/** An operator's catalog that replaces the spec's tables: vendor-a/gpt-6-luna is not sold. */
const catalogFile = join(directory, "catalog.json");
writeFileSync(
  catalogFile,
  JSON.stringify({
    models: [
      { id: "acme/tiny-1", kind: "chat", prices: { input_per_1m: "0.05", output_per_1m: "0.2" }, routes: [route] },
      { id: "acme/big-2", kind: "chat", prices: { input_per_1m: "1.5", output_per_1m: "6" }, routes: [route] },
      { id: "img", kind: "image", prices: { per_image: "0.01" }, limits: { sizes: ["1024x1024"] }, routes: [route] },
      { id: "decide", kind: "decision", prices: { input_per_1m: "0.2" }, routes: [route] },
      { id: "embed", kind: "embeddings", routes: [route] },
      { id: "free", kind: "free_chat", routes: [route] },
    ],
  }),
);
const catalog = loadPriceCatalog({ PAYSVC_CATALOG: catalogFile });

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

/**
 * A deployment selling `catalog`, answering as the service does: /health, its manifest, its /v1/models, and for a
 * chat completion the 402 at the catalog's price, or 400 for a model it does not sell.
 */
async function deployment(sold: ModelCatalog): Promise<string> {
  const accepts = { scheme: "exact", network: network.id, asset: network.usdc.address, payTo: PAY_TO };
  server = createServer((request, response) => {
    let body = "";
    request.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
    request.on("end", () => {
      const json = (status: number, value: unknown, headers: Record<string, string> = {}) =>
        response.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(value));
      if (request.url === "/health") return json(200, { status: "ok", network: network.id });
      if (request.url === "/.well-known/x402") return json(200, { version: 1, items: [{ accepts: [accepts] }] });
      if (request.url === "/v1/models") return json(200, listModels(sold, network));
      const { model } = JSON.parse(body) as { model: string };
      if (!sold.chat.some((known) => known.id === model)) return json(400, { error: { code: "model_not_found" } });
      void quoteRequest("/v1/chat/completions", body, network, sold).then((quote) => {
        const required = encodePaymentRequiredHeader({
          x402Version: 2,
          resource: { url: "http://127.0.0.1/v1/chat/completions" },
          accepts: [{ ...accepts, amount: quote.amount.toString(), maxTimeoutSeconds: 300, extra: {} }],
        });
        json(402, {}, { "payment-required": required });
      });
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe("paysvc health's quote check", () => {
  it("asks for a chat model the deployment sells (its /v1/models), with an operator's catalog, and names it", async () => {
    const origin = await deployment(catalog);
    const result = await checkOrigin(origin, undefined, 5000, catalog);
    expect(result.checks).toEqual([
      { name: "health", ok: true, detail: "200 ok eip155:137" },
      { name: "discovery", ok: true, detail: "1 paid resources" },
      { name: "quote", ok: true, detail: expect.stringMatching(/^acme\/tiny-1: \d+ atomic on eip155:137$/) },
    ]);
    expect(result.ok).toBe(true);
  });

  it("says which model it probed when the deployment's price is not the local catalog's", async () => {
    const origin = await deployment(catalog);
    const defaults = loadPriceCatalog({});
    const differs = await checkOrigin(origin, undefined, 5000, defaults);
    expect(differs.ok).toBe(false);
    expect(differs.checks[2]).toEqual({
      name: "quote",
      ok: false,
      detail: "acme/tiny-1: not in the local catalog (run with the deployment's PAYSVC_CATALOG)",
    });
  });
});

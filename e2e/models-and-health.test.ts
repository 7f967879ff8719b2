import { describe, expect, it } from "vitest";
import { stack } from "./support/payments";

describe("GET /v1/models", () => {
  it("lists every sellable GPT model with limits and prices", async () => {
    const response = await fetch(`${stack().appUrl}/v1/models`);
    expect(response.status).toBe(200);
    const list = await response.json();
    expect(list.object).toBe("list");
    expect(list.data.map((model: { id: string }) => model.id)).toEqual([
      "vendor-a/gpt-5.6-sol",
      "vendor-a/gpt-5.6-terra",
      "vendor-a/gpt-6-luna",
      "vendor-a/gpt-6-sol",
    ]);
    expect(list.data[0]).toMatchObject({
      object: "model",
      context_length: 1_100_000,
      max_output_tokens: 128_000,
      pricing: {
        input_per_1m_tokens: "2.80",
        output_per_1m_tokens: "14.00",
        input_per_token: "0.0000028",
        output_per_token: "0.000014",
      },
      payment: { network: "eip155:137", scheme: "exact", asset: "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359" },
      endpoints: ["/v1/chat/completions", "/api/v1/chat/completions", "/v1/responses", "/api/v1/responses"],
    });
  });
});

describe("GET /health", () => {
  it("reports every component up with the network and version", async () => {
    const response = await fetch(`${stack().appUrl}/health`);
    expect(response.status).toBe(200);
    const health = await response.json();
    expect(health).toMatchObject({
      status: "ok",
      network: "eip155:137",
      version: "1.0.0",
      checks: { database: { status: "up" }, facilitator: { status: "up" }, upstream: { status: "up" } },
    });
  });
});

import { describe, expect, it } from "vitest";
import { stack } from "./support/payments";

describe("GET /v1/models", () => {
  it("lists every sellable GPT model with limits and prices", async () => {
    const response = await fetch(`${stack().appUrl}/v1/models`);
    expect(response.status).toBe(200);
    const list = await response.json();
    expect(list.object).toBe("list");
    const chat = list.data.filter((model: { type: string }) => model.type === "chat");
    expect(chat.map((model: { id: string }) => model.id)).toEqual([
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
      endpoints: [
        "/v1/chat/completions",
        "/api/v1/chat/completions",
        "/v1/responses",
        "/api/v1/responses",
        "/v1/messages",
        "/api/v1/messages",
      ],
      aliases: [],
    });
  });

  it("lists the image models with their size and price per image, and the decision model", async () => {
    const list = await (await fetch(`${stack().appUrl}/v1/models`)).json();
    const images = list.data.filter((model: { type: string }) => model.type === "image");
    expect(images).toHaveLength(7);
    expect(images.find((model: { id: string }) => model.id === "gpt-image-2.5-sunburst-2k")).toMatchObject({
      sizes: ["2048x2048"],
      pricing: { per_image: "0.22", settlement_overhead_per_request: "0.001" },
      endpoints: ["/api/v1/images/generations", "/api/v1/images/image2image"],
    });
    expect(list.data.find((model: { id: string }) => model.id === "jev-latest")).toMatchObject({
      type: "decision",
      pricing: { input_per_1m_tokens: "0.12", output_per_1m_tokens: "0" },
      endpoints: ["/jev"],
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

describe("paths that are no endpoint's", () => {
  it("answers them with the API's JSON 404 (CORS included), other methods with 405, and leaves the console's pages", async () => {
    for (const [method, path] of [
      ["GET", "/v1/no-such-endpoint"],
      ["POST", "/v1/chat/completion"],
      ["GET", "/favicon.ico"],
    ] as const) {
      const response = await fetch(`${stack().appUrl}${path}`, {
        method,
        headers: { origin: "https://agent.example" },
      });
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(response.headers.get("content-type")).toBe("application/json");
      expect(response.headers.get("access-control-allow-origin")).toBe("*");
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe("not_found");
    }
    const deleted = await fetch(`${stack().appUrl}/health`, { method: "DELETE" });
    expect(deleted.status).toBe(405);
    expect(deleted.headers.get("allow")).toBe("GET, HEAD, OPTIONS");
    for (const page of ["/", "/keys", "/quota"]) {
      const response = await fetch(`${stack().appUrl}${page}`);
      expect(response.status, page).toBe(200);
      expect(response.headers.get("content-type")).toContain("text/html");
    }
  });
});

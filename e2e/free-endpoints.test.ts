import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { postJson, stack } from "./support/payments";
import { requestFrom } from "./support/request-from";

const PROXY = "127.0.0.2";
const CHAT = "/v1/free/chat/completions";
const QUOTA = "/v1/free/chat/completions/quota";

/** A request as a trusted proxy forwards it for `client`. */
function forwardedFor(client: string, method: "GET" | "POST", path: string, body?: unknown) {
  return requestFrom(PROXY, method, path, { body, headers: { "x-forwarded-for": `203.0.113.250, ${client}` } });
}

const chat = (content: string, extra: Record<string, unknown> = {}) => ({
  messages: [{ role: "user", content }],
  ...extra,
});

describe("embeddings (free)", () => {
  const openai = () => new OpenAI({ apiKey: "none", baseURL: `${stack().appUrl}/v1`, maxRetries: 0 });

  it("gives the same vector as float and as base64 through the official SDK", async () => {
    const asFloat = await openai().embeddings.create({
      model: "anything",
      input: "harbor lights",
      encoding_format: "float",
    });
    const viaBase64 = await openai().embeddings.create({ model: "anything", input: "harbor lights" }); // the SDK asks base64
    expect(asFloat.model).toBe("vendor-b/nemotron-3-embed-1b");
    const floatVector = asFloat.data[0]!.embedding;
    expect(viaBase64.data[0]!.embedding).toEqual(Array.from(new Float32Array(floatVector)));
    expect(Math.hypot(...floatVector)).toBeCloseTo(1, 6);
    expect(asFloat.usage.prompt_tokens).toBeGreaterThan(0);
    const raw = await (await postJson("/v1/embeddings", { input: "harbor lights", encoding_format: "base64" })).json();
    expect(typeof raw.data[0].embedding).toBe("string");
  });

  it("is deterministic, and similar texts are closer than unrelated ones", async () => {
    const result = await openai().embeddings.create({
      input: [
        "the cat sat on the mat",
        "the cat sat on the mat",
        "a cat sat on a mat",
        "quarterly tax filing deadline",
      ],
      encoding_format: "float",
      model: "x",
    });
    const [a, same, similar, unrelated] = result.data.map((item) => item.embedding);
    const dot = (x: number[], y: number[]) => x.reduce((sum, value, index) => sum + value * y[index]!, 0);
    expect(same).toEqual(a);
    expect(dot(a!, similar!)).toBeGreaterThan(dot(a!, unrelated!));
    expect(result.data.map((item) => item.index)).toEqual([0, 1, 2, 3]);
  });

  it("accepts 128 inputs and refuses 129 and 0 with the spec's error body", async () => {
    const ok = await postJson("/v1/embeddings", {
      input: Array.from({ length: 128 }, (_, index) => `text ${index}`),
      input_type: "passage",
    });
    expect(ok.status).toBe(200);
    expect((await ok.json()).data).toHaveLength(128);
    for (const input of [Array.from({ length: 129 }, () => "x"), []]) {
      const response = await postJson("/v1/embeddings", { input });
      expect(response.status).toBe(400);
      const body = await response.json();
      expect(Object.keys(body)).toEqual(["error"]);
      expect(body.error).toEqual({
        message: expect.any(String),
        type: "invalid_request",
        param: "input",
        code: expect.any(String),
        details: { expected: expect.any(String), schema: expect.any(Object) },
      });
      expect(Object.keys(body.error.details.schema).sort()).toEqual([
        "encoding_format",
        "input",
        "input_type",
        "model",
      ]);
    }
    for (const [body, param] of [
      [{ input: "x", input_type: "document" }, "input_type"],
      [{ input: "x", encoding_format: "int8" }, "encoding_format"],
      [{ input: ["ok", 3] }, "input[1]"],
      [{ input_type: "query" }, "input"],
    ] as const) {
      const response = await postJson("/v1/embeddings", body);
      expect(response.status).toBe(400);
      expect((await response.json()).error).toMatchObject({ type: "invalid_request", param });
    }
    const notJson = await postJson("/v1/embeddings", "{oops");
    expect((await notJson.json()).error.type).toBe("invalid_request");
  });

  it("gives bodies that are not JSON objects, or not sent as JSON, the spec's error body with a string param", async () => {
    const specBody = (param: string) => ({
      error: {
        message: expect.any(String),
        type: "invalid_request",
        param,
        code: expect.any(String),
        details: { expected: expect.any(String), schema: expect.any(Object) },
      },
    });
    for (const body of ["{oops", "", "[1, 2]", "null", '"text"', "42"]) {
      const response = await postJson("/v1/embeddings", body);
      expect(response.status, body).toBe(400);
      expect(await response.json(), body).toEqual(specBody("body"));
    }
    const plain = await postJson("/v1/embeddings", '{"input":"x"}', { "content-type": "text/plain" });
    expect(plain.status).toBe(415);
    expect(await plain.json()).toEqual({
      error: { ...specBody("content-type").error, code: "unsupported_media_type" },
    });
    const huge = await postJson("/v1/embeddings", JSON.stringify({ input: "x", pad: "x".repeat(25 * 1024 * 1024) }));
    expect(huge.status).toBe(413);
    expect(await huge.json()).toEqual({ error: { ...specBody("body").error, code: "request_too_large" } });
  });

  it("answers a body with model and no input with an empty list and a hint", async () => {
    const response = await postJson("/v1/embeddings", { model: "vendor-b/nemotron-3-embed-1b" });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      object: "list",
      data: [],
      model: "vendor-b/nemotron-3-embed-1b",
      hint: expect.stringMatching(/input/),
    });
  });

  it("answers 502 when the upstream fails", async () => {
    const response = await postJson("/v1/embeddings", { input: "[paysvc-dev-fault:http-error]" });
    expect(response.status).toBe(502);
  });

  it("limits each caller, an IPv6 one by its /64: past the window 429 with Retry-After, another /64 served", async () => {
    const embed = (client: string, input: unknown = "harbor lights") =>
      forwardedFor(client, "POST", "/v1/embeddings", { input });
    const first = await embed("2001:db8:48:1::1");
    expect(first.status).toBe(200);
    // The tightest window's limit (FREE_EMBEDDINGS_PER_10_MIN, 60 by default), and what is left of it.
    const limit = Number(first.headers["ratelimit-limit"]);
    expect(limit).toBeGreaterThan(1);
    expect(first.headers["ratelimit-remaining"]).toBe(String(limit - 1));
    // The rest of the window, from addresses all over the same /64: one caller.
    const rest = await Promise.all(
      Array.from({ length: limit - 1 }, (_, index) => embed(`2001:db8:48:1:${(index + 2).toString(16)}::9`)),
    );
    expect(rest.map((response) => response.status)).toEqual(rest.map(() => 200));
    const refused = await embed("2001:db8:48:1:ffff:ffff:ffff:fffe");
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers["retry-after"]);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(600);
    expect(refused.headers["ratelimit-remaining"]).toBe("0");
    expect(refused.json()).toMatchObject({ error: { code: "free_tier_exhausted" }, retry_after: retryAfter });
    // The next /64 is another caller; the free chat's windows of the first are its own.
    expect((await embed("2001:db8:48:2::1")).status).toBe(200);
    expect((await forwardedFor("2001:db8:48:1::1", "POST", CHAT, chat("still mine"))).status).toBe(200);
  });

  it("refuses input past the per-request token cap with 400 naming the cap, counting none", async () => {
    const client = "2001:db8:48:3::1";
    const first = await forwardedFor(client, "POST", "/v1/embeddings", { input: "harbor" });
    const remaining = Number(first.headers["ratelimit-remaining"]);
    // "harbor " is one token: 128 strings of 200 tokens are 25,600, past the default cap of 16,384.
    const input = Array.from({ length: 128 }, () => "harbor ".repeat(200));
    const over = await forwardedFor(client, "POST", "/v1/embeddings", { input });
    expect(over.status).toBe(400);
    const body = over.json() as { error: { message: string; param: string; code: string; type: string } };
    expect(body.error).toMatchObject({ param: "input", code: "context_length_exceeded", type: "invalid_request" });
    expect(body.error.message).toMatch(/at most 16384 input tokens per request/);
    const next = await forwardedFor(client, "POST", "/v1/embeddings", { input: "harbor" });
    expect(Number(next.headers["ratelimit-remaining"])).toBe(remaining - 1);
  });
});

describe("free chat", () => {
  it("answers with vendor-b/gpt-oss-20b, usage and rate-limit headers, streamed or not", async () => {
    const client = "198.51.100.10";
    const response = await forwardedFor(client, "POST", CHAT, chat("hello free"));
    expect(response.status).toBe(200);
    const completion = response.json() as {
      model: string;
      usage: { total_tokens: number };
      choices: { message: { content: string } }[];
    };
    expect(completion.model).toBe("vendor-b/gpt-oss-20b");
    expect(completion.usage.total_tokens).toBeGreaterThan(0);
    expect(completion.choices[0]?.message.content).toContain("hello free");
    expect(response.headers["ratelimit-limit"]).toBe("10");
    expect(response.headers["ratelimit-remaining"]).toBe("9");
    const streamed = await forwardedFor(
      client,
      "POST",
      CHAT,
      chat("stream free", { stream: true, model: "vendor-b/gpt-oss-20b" }),
    );
    expect(streamed.headers["content-type"]).toMatch(/text\/event-stream/);
    expect(streamed.text.trim().endsWith("data: [DONE]")).toBe(true);
  });

  it("lowers max_tokens, and max_completion_tokens (which the provider honours first), above 2048 to 2048 and says so", async () => {
    for (const [client, cap] of [
      ["198.51.100.11", { max_tokens: 5000 }],
      ["198.51.100.14", { max_completion_tokens: 100000 }],
    ] as const) {
      const response = await forwardedFor(client, "POST", CHAT, chat("[paysvc-dev-long] go on", cap));
      expect(response.status).toBe(200);
      expect(response.headers["x-max-tokens-lowered-from"]).toBe(String(Object.values(cap)[0]));
      expect((response.json() as { usage: { completion_tokens: number } }).usage.completion_tokens).toBe(2048);
    }
  });

  it("refuses n other than 1, mistyped OpenAI fields and input over 8192 tokens with 400, counting none", async () => {
    const client = "198.51.100.15";
    for (const [body, param] of [
      [chat("x", { n: 3 }), "n"],
      [chat("x", { temperature: "hot" }), "temperature"],
      [chat("x", { top_p: 7 }), "top_p"],
      [chat("harbor ".repeat(9000)), "messages"],
    ] as const) {
      const response = await forwardedFor(client, "POST", CHAT, body);
      expect(response.status, param).toBe(400);
      expect((response.json() as { error: { param: string } }).error.param).toBe(param);
    }
    expect((await forwardedFor(client, "GET", QUOTA)).json()).toMatchObject({ per10Min: { used: 0 } });
  });

  it("refuses a wrong model or missing messages with 400, and counts neither, nor an upstream failure", async () => {
    const client = "198.51.100.12";
    for (const body of [
      chat("x", { model: "vendor-a/gpt-6-luna" }),
      { model: "vendor-b/gpt-oss-20b" },
      { messages: [] },
      { messages: [{ role: "user" }] },
    ]) {
      const response = await forwardedFor(client, "POST", CHAT, body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.headers["ratelimit-limit"]).toBe("10");
    }
    const failed = await forwardedFor(client, "POST", CHAT, chat("[paysvc-dev-fault:http-error]"));
    expect(failed.status).toBe(502);
    const quota = (await forwardedFor(client, "GET", QUOTA)).json();
    expect(quota).toEqual({
      object: "free_quota",
      model: "vendor-b/gpt-oss-20b",
      per10Min: { limit: 10, used: 0, reset_seconds: 0 },
      perDay: { limit: 100, used: 0, reset_seconds: 0 },
    });
  });

  it("serves exactly 10 of 30 concurrent requests from one address; the others get 429 with Retry-After", async () => {
    // A caller of its own (127.0.0.3), so that the console test's browser on 127.0.0.1 keeps its allowance.
    const caller = "127.0.0.3";
    const responses = await Promise.all(
      Array.from({ length: 30 }, (_, index) => requestFrom(caller, "POST", CHAT, { body: chat(`burst ${index}`) })),
    );
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(10);
    expect(statuses.filter((status) => status === 429)).toHaveLength(20);
    for (const response of responses.filter((candidate) => candidate.status === 429)) {
      const retryAfter = Number(response.headers["retry-after"]);
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(600);
      const body = response.json() as { error: { code: string }; retry_after: number };
      expect(body.error.code).toBe("free_tier_exhausted");
      expect(body.retry_after).toBe(retryAfter);
    }
    const quota = (await requestFrom(caller, "GET", QUOTA)).json() as { per10Min: unknown; perDay: unknown };
    expect(quota.per10Min).toMatchObject({ limit: 10, used: 10 });
    expect(quota.perDay).toMatchObject({ limit: 100, used: 10 });

    // A client's own X-Forwarded-For is not believed: it is still the same address, still exhausted.
    const spoofed = await requestFrom(caller, "POST", CHAT, {
      body: chat("spoof"),
      headers: { "x-forwarded-for": "192.0.2.123" },
    });
    expect(spoofed.status).toBe(429);
    const spoofedForwarded = await requestFrom(caller, "POST", CHAT, {
      body: chat("spoof"),
      headers: { forwarded: "for=192.0.2.124" },
    });
    expect(spoofedForwarded.status).toBe(429);
    // Nor a header naming the socket's address: the server reads the socket itself.
    const spoofedPeer = await requestFrom(caller, "POST", CHAT, {
      body: chat("spoof"),
      headers: { "x-paysvc-peer-address": "192.0.2.127" },
    });
    expect(spoofedPeer.status).toBe(429);

    // Nor is a client's own Forwarded header that the proxy (appending to X-Forwarded-For only) passes through.
    const client = "198.51.100.16";
    for (const spoofed of ["192.0.2.125", "192.0.2.126"]) {
      const response = await requestFrom(PROXY, "POST", CHAT, {
        body: chat("spoof through the proxy"),
        headers: { "x-forwarded-for": client, forwarded: `for=${spoofed}` },
      });
      expect(response.status).toBe(200);
    }
    expect((await forwardedFor(client, "GET", QUOTA)).json()).toMatchObject({ per10Min: { used: 2 } });

    // An IPv6 caller is its /64: its quota is the same from any address in it.
    expect((await forwardedFor("2001:db8:48:9::1", "POST", CHAT, chat("v6"))).status).toBe(200);
    expect((await forwardedFor("2001:db8:48:9:abcd::2", "GET", QUOTA)).json()).toMatchObject({ per10Min: { used: 1 } });
    expect((await forwardedFor("2001:db8:48:a::1", "GET", QUOTA)).json()).toMatchObject({ per10Min: { used: 0 } });

    // Another client behind the trusted proxy has its own allowance.
    const other = await forwardedFor("198.51.100.13", "POST", CHAT, chat("another client"));
    expect(other.status).toBe(200);
    expect((await forwardedFor("198.51.100.13", "GET", QUOTA)).json()).toMatchObject({ per10Min: { used: 1 } });
  });
});

import { describe, expect, it } from "vitest";
import { chatBody, postJson, quote, stack } from "./support/payments";

const PATH = "/v1/chat/completions";

/** A message whose content is exactly `tokens` o200k tokens (" a" is one token each). */
function contentOfTokens(tokens: number): string {
  return "a".concat(" a".repeat(tokens - 1));
}

async function expectBadRequest(body: unknown, param: string | null, code = "invalid_request") {
  const response = await postJson(PATH, body);
  const json = await response.json();
  expect(response.status, JSON.stringify(json)).toBe(400);
  expect(response.headers.get("payment-required")).toBeNull();
  expect(json.error).toMatchObject({ type: "invalid_request_error", code, param });
  expect(typeof json.error.message).toBe("string");
  return json;
}

describe("chat prices", () => {
  it("quotes the 0.001 USD minimum for the smallest request on the cheapest model", async () => {
    const required = await quote(PATH, chatBody("x", { max_tokens: 1 }));
    expect(required.accepts[0]!.amount).toBe("1001");
    const minimum = await quote(PATH, {
      model: "vendor-a/gpt-6-luna",
      messages: [{ role: "user", content: "" }],
      max_tokens: 1,
    });
    expect(BigInt(minimum.accepts[0]!.amount)).toBeGreaterThanOrEqual(1000n);
  });

  it("quotes exactly 4.733000 USD for gpt-5.6-sol at both limits", async () => {
    // 7 tokens of framing (3 per message + role + 3 reply primer) plus the content make 1,050,000.
    const body = {
      model: "vendor-a/gpt-5.6-sol",
      messages: [{ role: "user", content: contentOfTokens(1_050_000 - 7) }],
      max_tokens: 128_000,
    };
    const required = await quote(PATH, body);
    expect(required.accepts[0]!.amount).toBe("4733000");
    const breakdown = required.extensions?.quote as Record<string, unknown>;
    expect(breakdown).toMatchObject({ input_tokens: 1_050_000, max_output_tokens: 128_000, total_usd: "4.733000" });
  });

  it("quotes 2 MB of one letter and of one emoji by their pieces, beside other requests", async () => {
    // 128 copies of a letter are 16 tokens, an emoji is one; 7 tokens of framing (see pricing/linear-token-count.ts).
    for (const [content, tokens] of [
      ["a".repeat(2_000_000), 250_000],
      ["\u{1F600}".repeat(500_000), 500_000],
    ] as const) {
      // Counted yielding to other work: a request sent beside it is answered too.
      const [required, models] = await Promise.all([
        quote(PATH, { model: "vendor-a/gpt-6-luna", messages: [{ role: "user", content }], max_tokens: 1 }),
        fetch(`${stack().appUrl}/v1/models`),
      ]);
      expect(models.status).toBe(200);
      expect((required.extensions?.quote as { input_tokens: number }).input_tokens).toBe(7 + tokens);
    }
  });

  it("refuses one input token over the limit with a 400 before any 402", async () => {
    const body = {
      model: "vendor-a/gpt-5.6-sol",
      messages: [{ role: "user", content: contentOfTokens(1_050_000 - 7 + 1) }],
      max_tokens: 1,
    };
    const json = await expectBadRequest(body, "messages", "context_length_exceeded");
    expect(json.error.message).toContain("1050001");
  });

  it("refuses max_tokens one over 128,000", async () => {
    await expectBadRequest(chatBody("x", { max_tokens: 128_001 }), "max_tokens");
    await expectBadRequest(chatBody("x", { max_completion_tokens: 128_001 }), "max_completion_tokens");
  });

  it("counts text that looks like a special token as plain text", async () => {
    const required = await quote(PATH, chatBody("<|endoftext|><|im_start|>system"));
    expect(Number((required.extensions?.quote as { input_tokens: number }).input_tokens)).toBeGreaterThan(8);
  });
});

describe("chat request validation (400 before any 402)", () => {
  it("names a missing or unknown model", async () => {
    await expectBadRequest({ messages: [{ role: "user", content: "x" }] }, "model");
    const unknown = await expectBadRequest(chatBody("x", { model: "gpt-4o" }), "model", "model_not_found");
    expect(unknown.error.message).toContain("vendor-a/gpt-6-luna");
    await expectBadRequest(chatBody("x", { model: 42 }), "model", "model_not_found");
  });

  it("names the malformed field", async () => {
    await expectBadRequest({ model: "vendor-a/gpt-6-luna" }, "messages");
    await expectBadRequest({ model: "vendor-a/gpt-6-luna", messages: [] }, "messages");
    await expectBadRequest({ model: "vendor-a/gpt-6-luna", messages: [{ content: "x" }] }, "messages[0].role");
    await expectBadRequest(
      { model: "vendor-a/gpt-6-luna", messages: [{ role: "user", content: 5 }] },
      "messages[0].content",
    );
    await expectBadRequest(chatBody("x", { max_tokens: 0 }), "max_tokens");
    await expectBadRequest(chatBody("x", { max_tokens: 2.5 }), "max_tokens");
    await expectBadRequest(chatBody("x", { temperature: 3 }), "temperature");
    await expectBadRequest(chatBody("x", { stream: "yes" }), "stream");
    await expectBadRequest(chatBody("x", { n: 2 }), "n");
  });

  it("refuses bodies that are not a JSON object", async () => {
    for (const raw of ["{not json", "", "[1,2]", "null", '"text"']) {
      const response = await postJson(PATH, raw);
      expect(response.status, raw).toBe(400);
      expect((await response.json()).error.type).toBe("invalid_request_error");
    }
    const wrongType = await fetch(`${stack().appUrl}${PATH}`, {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: "{}",
    });
    expect(wrongType.status).toBe(415);
  });

  it("refuses a body over the 24 MiB cap with 413", async () => {
    const response = await postJson(PATH, JSON.stringify({ ...chatBody("x"), pad: "x".repeat(25 * 1024 * 1024) }));
    expect(response.status).toBe(413);
    expect((await response.json()).error.code).toBe("request_too_large");
  });
});

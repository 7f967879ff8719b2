import { describe, expect, it } from "vitest";
import { balances, ledgerRow, officialPayment, payingOpenAI, postJson, quote, stack } from "./support/payments";

const PATH = "/v1/responses";
const payer = () => stack().payers[3]!;

const weatherTool = {
  type: "function" as const,
  name: "get_weather",
  description: "Current weather for a city",
  parameters: {
    type: "object",
    properties: { city: { type: "string" } },
    required: ["city"],
    additionalProperties: false,
  },
  strict: true,
};

describe("paid Responses API (alpha) through the official openai SDK and x402 client", () => {
  it("responses.create returns the text, and the payer pays exactly the quote", async () => {
    const body = {
      model: "vendor-a/gpt-6-sol",
      instructions: "Be brief.",
      input: "Describe a harbor",
      max_output_tokens: 200,
    };
    const price = BigInt((await quote(PATH, body)).accepts[0]!.amount);
    const before = await balances(payer().address);

    const response = await payingOpenAI(payer().privateKey).responses.create(body);

    expect(response.object).toBe("response");
    expect(response.status).toBe("completed");
    expect(response.id).toMatch(/^resp_[0-9a-f]{48}$/);
    expect(response.model).toBe("vendor-a/gpt-6-sol");
    expect(response.output_text).toContain("Describe a harbor");
    const message = response.output[0];
    expect(message).toMatchObject({ type: "message", status: "completed", role: "assistant" });
    if (message?.type !== "message") throw new Error("expected a message item");
    expect(message.id).toMatch(/^msg_/);
    expect(message.content).toEqual([{ type: "output_text", text: response.output_text, annotations: [] }]);
    expect(response.usage?.total_tokens).toBe(response.usage!.input_tokens + response.usage!.output_tokens);

    const after = await balances(payer().address);
    expect(before.payer - after.payer).toBe(price);
    expect(after.payTo - before.payTo).toBe(price);
  });

  it("responses.stream yields deltas whose concatenation is finalResponse().output_text", async () => {
    const body = { model: "vendor-a/gpt-6-luna", input: [{ role: "user" as const, content: "Stream about rivers" }] };
    const price = BigInt((await quote(PATH, { ...body, stream: true })).accepts[0]!.amount);
    const before = await balances(payer().address);

    const stream = payingOpenAI(payer().privateKey).responses.stream(body);
    const types: string[] = [];
    const sequence: number[] = [];
    let streamed = "";
    stream.on("event", (event) => {
      types.push(event.type);
      sequence.push(event.sequence_number);
    });
    stream.on("response.output_text.delta", (event) => (streamed += event.delta));
    const final = await stream.finalResponse();

    expect(final.output_text).toBe(streamed);
    expect(final.output_text).toContain("Stream about rivers");
    expect(final.usage?.output_tokens).toBeGreaterThan(0);
    expect(types.filter((type) => type === "response.output_text.delta").length).toBeGreaterThan(3);
    expect(types.slice(0, 4)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
    ]);
    expect(types.slice(-4)).toEqual([
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(sequence).toEqual(sequence.map((_, index) => index));

    const after = await balances(payer().address);
    expect(before.payer - after.payer).toBe(price);
    expect(after.payTo - before.payTo).toBe(price);
  });

  it("round-trips a function call: tool call out, tool output in, text answer back", async () => {
    const openai = payingOpenAI(payer().privateKey);
    const first = await openai.responses.create({
      model: "vendor-a/gpt-6-luna",
      input: "What is the weather in Paris? Use get_weather.",
      tools: [weatherTool],
      tool_choice: "required",
    });
    const call = first.output.find((item) => item.type === "function_call");
    if (call?.type !== "function_call")
      throw new Error(`expected a function call, got ${JSON.stringify(first.output)}`);
    expect(call.name).toBe("get_weather");
    expect(call.id).toMatch(/^fc_/);
    expect(JSON.parse(call.arguments)).toHaveProperty("city");

    const second = await openai.responses.create({
      model: "vendor-a/gpt-6-luna",
      input: [
        { role: "user", content: "What is the weather in Paris? Use get_weather." },
        { type: "function_call", call_id: call.call_id, name: call.name, arguments: call.arguments },
        { type: "function_call_output", call_id: call.call_id, output: '{"temperature_c": 18, "sky": "clear"}' },
      ],
      tools: [weatherTool],
    });
    expect(second.output[0]?.type).toBe("message");
    expect(second.output_text).toContain("tool result");
    expect(second.output_text).toContain("temperature_c");
  });

  it("streams function-call arguments as deltas", async () => {
    const stream = payingOpenAI(payer().privateKey).responses.stream({
      model: "vendor-a/gpt-6-luna",
      input: "Call get_weather for Oslo",
      tools: [weatherTool],
    });
    const types: string[] = [];
    stream.on("event", (event) => types.push(event.type));
    const final = await stream.finalResponse();
    expect(types).toContain("response.function_call_arguments.delta");
    expect(types).toContain("response.function_call_arguments.done");
    const call = final.output.find((item) => item.type === "function_call");
    expect(call).toMatchObject({ type: "function_call", name: "get_weather", status: "completed" });
  });

  it("serves the alias /api/v1/responses", async () => {
    const response = await payingOpenAI(payer().privateKey, `${stack().appUrl}/api/v1`).responses.create({
      model: "vendor-a/gpt-6-luna",
      input: "alias",
    });
    expect(response.output_text).toContain("alias");
  });
});

describe("Responses pricing and validation", () => {
  it("prices instructions plus input and max_output_tokens (default 4096)", async () => {
    const small = await quote(PATH, { model: "vendor-a/gpt-5.6-sol", input: "hi" });
    const breakdown = small.extensions?.quote as { input_tokens: number; max_output_tokens: number };
    expect(breakdown.max_output_tokens).toBe(4096);
    const withInstructions = await quote(PATH, {
      model: "vendor-a/gpt-5.6-sol",
      input: "hi",
      instructions: "Answer in French.",
    });
    expect((withInstructions.extensions?.quote as { input_tokens: number }).input_tokens).toBeGreaterThan(
      breakdown.input_tokens,
    );
    const capped = await quote(PATH, { model: "vendor-a/gpt-5.6-sol", input: "hi", max_output_tokens: 128_000 });
    expect(BigInt(capped.accepts[0]!.amount)).toBeGreaterThan(BigInt(small.accepts[0]!.amount));
  });

  async function expectBadRequest(body: unknown, param: string | null) {
    const response = await postJson(PATH, body);
    const json = await response.json();
    expect(response.status, JSON.stringify(json)).toBe(400);
    expect(response.headers.get("payment-required")).toBeNull();
    expect(json.error.param).toBe(param);
    return json.error as { message: string; code: string };
  }

  it("refuses bad input with a 400 naming the field, before any 402", async () => {
    expect((await expectBadRequest({ input: "x" }, "model")).message).toMatch(/model/);
    expect((await expectBadRequest({ model: "gpt-4o", input: "x" }, "model")).code).toBe("model_not_found");
    await expectBadRequest({ model: "vendor-a/gpt-6-luna" }, "input");
    await expectBadRequest({ model: "vendor-a/gpt-6-luna", input: "" }, "input");
    await expectBadRequest({ model: "vendor-a/gpt-6-luna", input: [] }, "input");
    await expectBadRequest({ model: "vendor-a/gpt-6-luna", input: 7 }, "input");
    await expectBadRequest({ model: "vendor-a/gpt-6-luna", input: [{ role: "robot", content: "x" }] }, "input[0].role");
    await expectBadRequest(
      { model: "vendor-a/gpt-6-luna", input: "x", max_output_tokens: 128_001 },
      "max_output_tokens",
    );
    await expectBadRequest(
      { model: "vendor-a/gpt-6-luna", input: "x", max_output_tokens: "many" },
      "max_output_tokens",
    );
    await expectBadRequest({ model: "vendor-a/gpt-6-luna", input: "x", instructions: 3 }, "instructions");
    await expectBadRequest(
      { model: "vendor-a/gpt-6-luna", input: "x", tools: [{ type: "custom", name: "a b" }] },
      "tools[0].name",
    );
    await expectBadRequest(
      { model: "vendor-a/gpt-6-luna", input: "x", reasoning: { effort: "extreme" } },
      "reasoning.effort",
    );
    await expectBadRequest({ model: "vendor-a/gpt-6-luna", input: "x", include: "all" }, "include");
  });

  it("names fields it cannot honour without charging for what it cannot see, instead of dropping them", async () => {
    const error = await expectBadRequest(
      { model: "vendor-a/gpt-6-luna", input: "x", previous_response_id: "resp_1" },
      "previous_response_id",
    );
    expect(error.message).toMatch(/Unsupported parameter: 'previous_response_id'/);
    await expectBadRequest({ model: "vendor-a/gpt-6-luna", input: "x", background: true }, "background");
  });

  it("accepts what it drops when translating (reasoning, hosted tools) with the 402, priced as without them", async () => {
    const plain = { model: "vendor-a/gpt-6-luna", input: "x" };
    const dropped = { ...plain, reasoning: { effort: "high" }, store: true, tools: [{ type: "web_search" }] };
    const price = (await quote(PATH, plain)).accepts[0]!.amount;
    expect((await quote(PATH, dropped)).accepts[0]!.amount).toBe(price);
  });
});

describe("Responses failures charge nothing", () => {
  it("an upstream failure is a 502 and nothing is settled", async () => {
    const body = { model: "vendor-a/gpt-6-luna", input: "[paysvc-dev-fault:http-error]" };
    const signature = await officialPayment(payer().privateKey, await quote(PATH, body));
    const before = await balances(payer().address);
    const response = await postJson(PATH, body, { "PAYMENT-SIGNATURE": signature });
    expect(response.status).toBe(502);
    expect(await balances(payer().address)).toEqual(before);
    expect(ledgerRow(signature)).toMatchObject({ status: "not_charged" });
  });

  it("a stream that breaks after settlement ends with an error event", async () => {
    const body = { model: "vendor-a/gpt-6-luna", input: "[paysvc-dev-fault:break-mid-stream]", stream: true };
    const signature = await officialPayment(payer().privateKey, await quote(PATH, body));
    const response = await postJson(PATH, body, { "PAYMENT-SIGNATURE": signature });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toMatch(/^event: response\.created/);
    expect(text).toContain("event: error");
    expect(text).not.toContain("response.completed");
    expect(text).not.toContain("[DONE]");
  });
});

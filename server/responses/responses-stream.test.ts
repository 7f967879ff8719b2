import { describe, expect, it } from "vitest";
import { defaultCatalog } from "../../config/catalog/default-catalog";
import { parseResponsesRequest } from "./responses-request";
import { SseEvent } from "../http/event-stream";
import { ResponsesEventTranslator as Translator } from "./responses-stream";

/** The translator fed with event data as text, giving the text of the events it makes. */
class ResponsesEventTranslator {
  private readonly translator: Translator;
  constructor(request: typeof parsed) {
    this.translator = new Translator(request);
  }
  start = () => this.translator.start().map((event) => event.text());
  push = (data: string) => this.translator.push(new SseEvent(data)).map((event) => event.text());
  finish = () => this.translator.finish().map((event) => event.text());
  fail = (message: string) => this.translator.fail(message).map((event) => event.text());
  end = () => this.translator.end().map((event) => event.text());
}

const parsed = parseResponsesRequest({ model: "vendor-a/gpt-6-luna", input: "hi", stream: true }, defaultCatalog());
const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] });
const events = (lines: string[]) =>
  lines
    .filter((line) => line.startsWith("event:"))
    .map((line) => JSON.parse(line.split("\ndata: ")[1]!) as { type: string });

describe("ResponsesEventTranslator", () => {
  it("emits one text delta per upstream delta and completes with the full output", () => {
    const translator = new ResponsesEventTranslator(parsed);
    const out = [
      ...translator.start(),
      ...translator.push(chunk({ role: "assistant", content: "" })),
      ...translator.push(chunk({ content: "Hel" })),
      ...translator.push(chunk({ content: "lo" })),
      ...translator.push(chunk({}, "stop")),
      ...translator.push(
        JSON.stringify({ choices: [], usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } }),
      ),
      ...translator.push("[DONE]"),
    ];
    const parsedEvents = events(out);
    expect(parsedEvents.filter((event) => event.type === "response.output_text.delta")).toHaveLength(2);
    const completed = parsedEvents.at(-1) as unknown as {
      type: string;
      response: { output_text: string; usage: { total_tokens: number } };
    };
    expect(completed.type).toBe("response.completed");
    expect(completed.response.output_text).toBe("Hello");
    expect(completed.response.usage.total_tokens).toBe(7);
    expect(out.at(-1)).toBe("data: [DONE]\n\n");
  });

  it("fails with an error event when the upstream closes before finishing", () => {
    const translator = new ResponsesEventTranslator(parsed);
    translator.start();
    translator.push(chunk({ content: "partial" }));
    const out = translator.end();
    expect(events(out).map((event) => event.type)).toEqual(["error"]);
    expect(out.join("")).not.toContain("[DONE]");
    expect(translator.push("[DONE]")).toEqual([]);
  });

  it("completes an answer whose upstream ended without [DONE] after its finish reason", () => {
    const translator = new ResponsesEventTranslator(parsed);
    translator.start();
    translator.push(chunk({ content: "done" }, "stop"));
    expect(events(translator.end()).at(-1)?.type).toBe("response.completed");
  });

  it("fails on an event that is not JSON", () => {
    const translator = new ResponsesEventTranslator(parsed);
    translator.start();
    expect(events(translator.push("{oops")).map((event) => event.type)).toEqual(["error"]);
  });

  it("states the cost billing appended to the canonical usage in response.completed's usage", () => {
    const translator = new ResponsesEventTranslator(parsed);
    translator.start();
    translator.push(chunk({ content: "hi" }, "stop"));
    const cost = { cost: "0.000002", prepaid_charged_tokens: 7, prepaid_remaining_tokens: 993 };
    const usage = { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7, ...cost, is_byok: false };
    translator.push(JSON.stringify({ choices: [], usage }));
    const completed = events(translator.push("[DONE]")).at(-1) as unknown as { response: { usage: object } };
    expect(completed.response.usage).toEqual({
      input_tokens: 5,
      output_tokens: 2,
      total_tokens: 7,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens_details: { reasoning_tokens: 0 },
      ...cost,
    });
  });

  it("renders the canonical error event as the Responses error event, with billing's code or upstream_error", () => {
    const billing = new ResponsesEventTranslator(parsed);
    billing.start();
    const refused = { error: { message: "Settlement failed", type: "payment_error", code: "settlement_failed" } };
    expect(events(billing.push(JSON.stringify(refused)))).toEqual([
      expect.objectContaining({ type: "error", code: "settlement_failed", message: "Settlement failed" }),
    ]);
    const provider = new ResponsesEventTranslator(parsed);
    provider.start();
    expect(events(provider.push(JSON.stringify({ error: { message: "overloaded" } })))).toEqual([
      expect.objectContaining({ type: "error", code: "upstream_error", message: "overloaded" }),
    ]);
  });

  it("writes each event as its JSON object would be written, byte for byte, deltas included", () => {
    const translator = new Translator(parsed);
    const tricky = 'say "hi"\n\t\u2028 – 😀 \\ </script>';
    const out = [
      ...translator.start(),
      ...translator.push(new SseEvent(chunk({ content: tricky }))),
      ...translator.push(
        new SseEvent(
          chunk({ tool_calls: [{ index: 0, id: "call_1", function: { name: "run", arguments: '{"cmd":"' } }] }),
        ),
      ),
      ...translator.push(new SseEvent(chunk({ tool_calls: [{ index: 0, function: { arguments: tricky } }] }))),
    ];
    const text = out.map((event) => event.text());
    // Each as SseEvent.of writes it, from the object parsed back (JSON.parse keeps the keys' order).
    const rewritten = text.map((written) => {
      const [nameLine, dataLine] = written.split("\n");
      return SseEvent.of(JSON.parse(dataLine!.slice("data: ".length)), nameLine!.slice("event: ".length)).text();
    });
    expect(text).toEqual(rewritten);
    const fields = text.map((written) => Object.keys(JSON.parse(written.split("\ndata: ")[1]!)).join(","));
    expect(fields).toEqual([
      "type,sequence_number,response",
      "type,sequence_number,response",
      "type,sequence_number,output_index,item",
      "type,sequence_number,item_id,output_index,content_index,part",
      "type,sequence_number,item_id,output_index,content_index,delta",
      "type,sequence_number,output_index,item",
      "type,sequence_number,item_id,output_index,delta",
      "type,sequence_number,item_id,output_index,delta",
    ]);
    const deltas = text.map((written) => JSON.parse(written.split("\ndata: ")[1]!) as { delta?: string });
    expect(deltas.map((event) => event.delta).filter(Boolean)).toEqual([tricky, '{"cmd":"', tricky]);
    const [created, inProgress] = text
      .slice(0, 2)
      .map((written) => JSON.parse(written.split("\ndata: ")[1]!) as { response: unknown });
    expect(created!.response).toEqual(inProgress!.response);
  });
});

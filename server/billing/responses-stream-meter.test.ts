import { describe, expect, it } from "vitest";
import { dataOfFixture as eventsOf, fedWithData } from "./__fixtures__/events";
import { responsesStreamMeter } from "./responses-stream-meter";

/** Feeds events to a meter; true when it hid any (a Responses meter never does). */
const feed = (meter: ReturnType<typeof fedWithData>, events: readonly string[]) =>
  events.map((data) => meter.push(data).hide).some(Boolean);

const meter = () => fedWithData(responsesStreamMeter({ allowedOutput: 100 }));
const event = (type: string, fields: Record<string, unknown> = {}) => JSON.stringify({ type, ...fields });

describe("responsesStreamMeter over recorded streams", () => {
  it("charges the output tokens of response.completed, and never hides an event", () => {
    const events = eventsOf("responses-with-usage");
    // created, in_progress, item added, part added, 4 deltas, text done, part done, item done, completed, [DONE]
    expect(events).toHaveLength(13);
    const responses = meter();
    expect(feed(responses, events)).toBe(false);
    expect(responses.usageReported).toBe(true);
    expect(responses.result(true)).toBe(33);
  });

  it("counts the deltas only, not the done events that repeat their text, when cut before completing", () => {
    const events = eventsOf("responses-with-usage");
    const responses = meter();
    feed(responses, events.slice(0, 4));
    expect(responses.hasOutput).toBe(false);
    expect(responses.result(false)).toBeUndefined();
    feed(responses, events.slice(4, 6));
    expect(responses.result(false)).toBe(17);
    feed(responses, events.slice(6, 11)); // the other deltas, then output_text.done, content_part.done, item done
    expect(responses.usageReported).toBe(false);
    expect(responses.result(false)).toBe(33);
    expect(responses.result(true)).toBe(100);
  });

  it("treats the error event as a break: the text passed on is charged, not the reservation", () => {
    const responses = meter();
    feed(responses, eventsOf("responses-error"));
    expect(responses.usageReported).toBe(true);
    expect(responses.result(true)).toBe(24);
  });
});

describe("responsesStreamMeter rules, event by event", () => {
  it("counts function call arguments as output, and reads usage on response.completed only", () => {
    const responses = meter();
    responses.push(event("response.function_call_arguments.delta", { delta: '{"city":"Oslo"}' }));
    responses.push(event("response.in_progress", { response: { usage: { output_tokens: 50 } } }));
    expect(responses.usageReported).toBe(false);
    expect(responses.result(false)).toBe(6); // {"city":"Oslo"}
    responses.push(event("response.completed", { response: { usage: { output_tokens: 12 } } }));
    expect(responses.result(false)).toBe(12);
  });

  it("charges the reservation for a completed response without usage, or with a malformed one", () => {
    const responses = meter();
    responses.push(event("response.output_text.delta", { delta: "Hello" }));
    responses.push(event("response.completed", { response: { usage: { output_tokens: "12" } } }));
    expect(responses.usageReported).toBe(false);
    expect(responses.result(true)).toBe(100);
    expect(responses.result(false)).toBe(1);
  });

  it("passes events it cannot read unread: no type, a delta that is not text, [DONE]", () => {
    const responses = meter();
    for (const data of [JSON.stringify({ delta: "x" }), event("response.output_text.delta", { delta: 5 }), "[DONE]"]) {
      expect(responses.push(data).hide).toBe(false);
    }
    expect(responses.hasOutput).toBe(false);
    expect(responses.result(false)).toBeUndefined();
  });
});

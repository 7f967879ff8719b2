import { describe, expect, it } from "vitest";
import { dataOfFixture as eventsOf, fedWithData } from "./__fixtures__/events";
import { chatStreamMeter } from "./chat-stream-meter";

/** Feeds events to a meter. */
function feed(meter: ReturnType<typeof fedWithData>, events: readonly string[]): void {
  for (const data of events) meter.push(data);
}

const meter = () => fedWithData(chatStreamMeter({ allowedOutput: 100 }));
const chunk = (fields: Record<string, unknown>) => JSON.stringify({ object: "chat.completion.chunk", ...fields });
const delta = (value: Record<string, unknown>) => chunk({ choices: [{ index: 0, delta: value }] });

describe("chatStreamMeter over recorded streams", () => {
  it("charges the reported completion tokens, whether or not the stream completed", () => {
    const events = eventsOf("chat-with-usage");
    expect(events).toHaveLength(8); // role and 4 content deltas, finish, usage-only, [DONE]
    const chat = meter();
    feed(chat, events);
    expect(chat.usageReported).toBe(true);
    expect(chat.hasOutput).toBe(true);
    expect(chat.result(true)).toBe(33);
    expect(chat.result(false)).toBe(33);
  });

  it("reads the same events from CRLF line ends and lines cut anywhere", () => {
    const events = eventsOf("chat-with-usage-crlf-split");
    expect(events).toEqual(eventsOf("chat-with-usage"));
    const chat = meter();
    feed(chat, events);
    expect(chat.result(true)).toBe(33);
  });

  it("charges the whole reservation for a completed stream without usage, the text counted for one cut short", () => {
    const chat = meter();
    feed(chat, eventsOf("chat-without-usage"));
    expect(chat.usageReported).toBe(false);
    expect(chat.result(true)).toBe(100);
    // The 33 tokens the provider reports for this text when asked (chat-with-usage): counted the same way.
    expect(chat.result(false)).toBe(33);
  });

  it("counts the text up to a cut: role delta alone is no output, each content delta is", () => {
    const events = eventsOf("chat-without-usage");
    const chat = meter();
    feed(chat, events.slice(0, 1));
    expect(chat.hasOutput).toBe(false);
    expect(chat.result(false)).toBeUndefined();
    feed(chat, events.slice(1, 3));
    expect(chat.hasOutput).toBe(true);
    expect(chat.result(false)).toBe(17);
  });

  it("counts a tool call's name and arguments, and charges its reported usage", () => {
    const events = eventsOf("chat-tool-calls");
    const cut = meter();
    feed(cut, events.slice(0, 4)); // role, name, {"cit, y":"O
    expect(cut.result(false)).toBe(6);
    const whole = meter();
    feed(whole, events);
    expect(whole.result(true)).toBe(8);
  });

  it("treats an error event as a break: the text passed on is charged, not the reservation", () => {
    const chat = meter();
    feed(chat, eventsOf("chat-error"));
    expect(chat.usageReported).toBe(true); // no report can come any more: nothing to wait for
    expect(chat.result(true)).toBe(24);
  });
});

describe("chatStreamMeter rules, event by event", () => {
  it("takes usage from any chunk, the last report winning, and ignores null or malformed counts", () => {
    const chat = meter();
    chat.push(delta({ content: "hi" }));
    chat.push(chunk({ choices: [{ delta: { content: "!" } }], usage: { completion_tokens: 7 } }));
    expect(chat.result(false)).toBe(7);
    chat.push(chunk({ choices: [], usage: { completion_tokens: 9 } }));
    chat.push(chunk({ choices: [], usage: null }));
    chat.push(chunk({ choices: [], usage: { completion_tokens: "12" } }));
    chat.push(chunk({ choices: [], usage: { completion_tokens: -1 } }));
    expect(chat.result(false)).toBe(9);
  });

  it("reads content, reasoning once under either name, refusal, and tool calls, past odd fields", () => {
    const chat = meter();
    chat.push(
      chunk({
        choices: [
          { delta: { reasoning: "Think", refusal: " no" } },
          null,
          {
            delta: {
              reasoning_content: " more",
              tool_calls: [null, { function: { name: " call", arguments: " args" } }],
            },
          },
          { delta: { reasoning: " same", reasoning_content: " same", content: 5 } },
          { delta: { content: " ok", tool_calls: "x" } },
          { delta: null },
        ],
      }),
    );
    // "Think no more call args same ok", 7 tokens: one part lost counts 5 or 6, reasoning counted twice 8.
    expect(chat.result(false)).toBe(7);
  });

  it("passes data that is not a chunk unread: [DONE], garbage, arrays, a null error", () => {
    const chat = meter();
    for (const data of ["[DONE]", "not json", "[1,2]", "42", '{"error":null,"choices":[]}']) chat.push(data);
    expect(chat.usageReported).toBe(false);
    expect(chat.hasOutput).toBe(false);
    expect(chat.result(true)).toBe(100);
    expect(chat.result(false)).toBeUndefined();
  });

  it("breaks off on an error beside an id, and then charges nothing when no text passed", () => {
    const chat = meter();
    chat.push(JSON.stringify({ id: "c1", object: "chat.completion.chunk", error: { code: 502 } }));
    expect(chat.usageReported).toBe(true);
    expect(chat.result(true)).toBeUndefined();
  });
});

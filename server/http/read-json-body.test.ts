import { describe, expect, it } from "vitest";
import { ApiError } from "../core/errors";
import { MAX_JSON_DEPTH, readJsonBody } from "./read-json-body";

const json = { "content-type": "application/json" };

/** A Web Request: its body arrives as a stream, in chunks of the engine's choosing. */
const streamed = (text: string) =>
  new Request("http://paysvc.test/v1/chat/completions", { method: "POST", headers: json, body: text });

/** A request whose whole body the server read before the handler ran, as app/serve.mjs does. */
const buffered = (text: string) => ({
  method: "POST",
  url: "http://paysvc.test/v1/chat/completions",
  headers: { get: (name: string) => (name === "content-type" ? "application/json" : null) },
  body: null,
  bodyBytes: Buffer.from(text),
});

/** A chat body whose tools nest `depth` arrays and objects deep, counting the body's own object. */
const nested = (depth: number) =>
  `{"model":"vendor-a/gpt-6-luna","messages":[{"role":"user","content":"x"}],"tools":${"[".repeat(depth - 1)}${"]".repeat(depth - 1)}}`;

async function refusal(read: Promise<unknown>) {
  try {
    await read;
  } catch (error) {
    const { status, type, message } = error as ApiError;
    return { status, type, message };
  }
  return "accepted";
}

describe("the nesting depth of a JSON body", () => {
  it("is refused past the limit as a 400 naming it, however the body arrives", async () => {
    // About 200 KB, under every body cap: deep enough for JSON.stringify (pricing, the upstream call) to overflow.
    for (const text of [nested(100_000), nested(MAX_JSON_DEPTH + 1)]) {
      for (const request of [streamed(text), buffered(text)]) {
        expect(await refusal(readJsonBody(request))).toEqual({
          status: 400,
          type: "invalid_request_error",
          message: `Request body is nested too deeply: arrays and objects may nest at most ${MAX_JSON_DEPTH} levels deep`,
        });
      }
    }
  });

  it("is allowed up to the limit, and brackets inside strings are text, not nesting", async () => {
    expect(MAX_JSON_DEPTH).toBe(128);
    expect(await refusal(readJsonBody(buffered(nested(MAX_JSON_DEPTH))))).toBe("accepted");
    const brackets = "[{".repeat(5000);
    const text = JSON.stringify({ messages: [{ role: "user", content: `say "${brackets}\\" ${brackets}` }] });
    const read = await readJsonBody(streamed(text));
    expect(read.value).toEqual(JSON.parse(text));
    // A string ending in a backslash ends at its quote: the brackets after it are still inside the next string.
    for (const value of [
      { a: "x\\", b: brackets },
      { a: `\\${brackets}`, b: "\\\\" + brackets },
    ]) {
      expect(await refusal(readJsonBody(buffered(JSON.stringify(value)))), JSON.stringify(value)).toBe("accepted");
    }
  });

  it("still reports invalid JSON as such; its shape, counted before it is parsed, is refused first", async () => {
    expect(await refusal(readJsonBody(buffered("[".repeat(MAX_JSON_DEPTH))))).toMatchObject({
      status: 400,
      message: expect.stringMatching(/^Request body is not valid JSON/),
    });
    expect(await refusal(readJsonBody(buffered("[".repeat(1000))))).toMatchObject({
      status: 400,
      message: expect.stringMatching(/^Request body is nested too deeply/),
    });
  });
});

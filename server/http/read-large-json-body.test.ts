import { hash } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { ApiError } from "../core/errors";
import { decodeInSlices } from "./decode-in-slices";
import { MAX_JSON_DEPTH, MAX_JSON_MEMBERS, readJsonBody, SLICED_BODY_BYTES } from "./read-json-body";

/** A request whose body arrives in chunks cut at random places (a seeded sequence), as a socket delivers it. */
function chunked(body: string | Buffer, seed: number) {
  const bytes = Buffer.from(body);
  let state = seed;
  const next = () => {
    state = (state * 1_103_515_245 + 12_345) >>> 0;
    return state;
  };
  let at = 0;
  return {
    method: "POST",
    url: "http://paysvc.test/v1/chat/completions",
    headers: { get: (name: string) => (name === "content-type" ? "application/json" : null) },
    body: new ReadableStream<Uint8Array>({
      pull(controller) {
        if (at >= bytes.length) return controller.close();
        const size = 1 + (next() % 200_000);
        controller.enqueue(new Uint8Array(bytes.subarray(at, at + size)));
        at += size;
      },
    }),
  };
}

async function outcome(text: string | Buffer, seed: number, optional = false) {
  try {
    const body = await readJsonBody(chunked(text, seed), undefined, { optional });
    return { value: body.value, sha256: body.sha256 };
  } catch (error) {
    const { status, type, message } = error as ApiError;
    return { status, type, message };
  }
}

/** What a body of at most SLICED_BODY_BYTES (parsed at once) is answered: the reference for larger ones. */
function expected(text: string | Buffer) {
  const raw = Buffer.from(text);
  const decoded = raw.toString("utf8");
  if (decoded.trim() === "")
    return { status: 400, type: "invalid_request_error", message: "Request body is required and must be JSON" };
  try {
    return { value: JSON.parse(decoded) as unknown, sha256: hash("sha256", raw, "hex") };
  } catch (error) {
    return {
      status: 400,
      type: "invalid_request_error",
      message: `Request body is not valid JSON: ${(error as Error).message}`,
    };
  }
}

/** Many small messages (as many as one array may hold): the shape JSON.parse takes longest on, about 1.4 MB. */
const manyMessages = (count: number) =>
  JSON.stringify({
    model: "vendor-a/gpt-6-luna",
    messages: Array.from({ length: count }, (_, index) => ({
      role: index % 2 ? "assistant" : "user",
      content: `m${index} \u00e9\u{1F600} ${"w".repeat(index % 64)}`,
    })),
    max_tokens: 16,
  });

describe("a JSON body larger than SLICED_BODY_BYTES", () => {
  it("reads as JSON.parse reads it, whatever its chunks, and is refused in the same words when it is not JSON", async () => {
    const valid = manyMessages(MAX_JSON_MEMBERS);
    const bigText = JSON.stringify({
      model: "m",
      messages: [{ role: "user", content: `\\"\u{1F600}\uD800${"x\\u00e9\n".repeat(300_000)}` }],
    });
    const cases: (string | Buffer)[] = [
      valid,
      bigText,
      `{"__proto__":{"admin":true},"a":1,"a":${valid}, "b": [${`[${"1e400,-0,".repeat(5_000)}0],`.repeat(40)}0]}`,
      valid.slice(0, -1),
      `${valid.slice(0, 900_000)}x${valid.slice(900_000)}`,
      `${valid}  ,`,
      bigText.replace("\\u00e9", "\\u00g9"),
      `\uFEFF${valid}`,
      Buffer.concat([
        Buffer.from(valid.slice(0, 1_000_000)),
        Buffer.from([0xff, 0xc3, 0x28, 0xf0, 0x9f]),
        Buffer.from(valid.slice(1_000_000)),
      ]),
      " \n".repeat(SLICED_BODY_BYTES),
    ];
    for (const [index, text] of cases.entries()) {
      expect(Buffer.byteLength(text), `case ${index}`).toBeGreaterThan(SLICED_BODY_BYTES);
      const answer = await outcome(text, index + 1);
      expect(answer, `case ${index}`).toEqual(expected(text));
      if ("value" in answer)
        expect(Object.getOwnPropertyNames(answer.value)).toEqual(
          Object.getOwnPropertyNames(JSON.parse(Buffer.from(text).toString())),
        );
    }
    expect(await outcome(" \n".repeat(SLICED_BODY_BYTES), 9, true)).toEqual({
      value: undefined,
      sha256: hash("sha256", "", "hex"),
    });
  });

  it("is refused as nested too deeply, past the limit only", async () => {
    const padding = `"pad":"${"p".repeat(SLICED_BODY_BYTES)}"`;
    for (const depth of [MAX_JSON_DEPTH - 1, MAX_JSON_DEPTH]) {
      // The body's own object, then depth - 1 arrays around a number.
      const text = `{${padding},"deep":${"[".repeat(depth - 1)}1${"]".repeat(depth - 1)}}`;
      expect(await outcome(text, depth)).toEqual(expected(text));
    }
    const tooDeep = `{${padding},"deep":${"[".repeat(MAX_JSON_DEPTH)}${"]".repeat(MAX_JSON_DEPTH)}}`;
    expect(await outcome(tooDeep, 3)).toEqual({
      status: 400,
      type: "invalid_request_error",
      message: `Request body is nested too deeply: arrays and objects may nest at most ${MAX_JSON_DEPTH} levels deep`,
    });
  });
});

describe("decoding a body in slices", () => {
  it("gives toString's text and the bytes' SHA-256, for any bytes and any slice size", async () => {
    let state = 7;
    const next = () => (state = (state * 1_103_515_245 + 12_345) >>> 0);
    const pieces = [
      Buffer.from("a\u00e9\u20ac\u{1F600}\uFEFF"),
      Buffer.from([0xff]),
      Buffer.from([0xc3]),
      Buffer.from([0xe2, 0x82]),
      Buffer.from([0xf0, 0x9f, 0x98]),
      Buffer.from([0xed, 0xa0, 0x80]),
      Buffer.from([0xc0, 0x80]),
    ];
    for (let round = 0; round < 300; round++) {
      const parts: Buffer[] = [];
      for (let count = next() % 60; count > 0; count--) parts.push(pieces[next() % pieces.length]!);
      const bytes = Buffer.concat(parts);
      const sliceBytes = 1 + (next() % 9);
      // Cut into chunks at random too, as they arrive.
      const chunks: Uint8Array[] = [];
      for (let at = 0; at < bytes.length;) {
        const size = 1 + (next() % 12);
        chunks.push(bytes.subarray(at, at + size));
        at += size;
      }
      expect(await decodeInSlices(chunks, sliceBytes), `${bytes.toString("hex")} in slices of ${sliceBytes}`).toEqual({
        text: bytes.toString("utf8"),
        sha256: hash("sha256", bytes, "hex"),
      });
    }
  });
});

import { ApiError } from "../core/errors";
import {
  CLOSE_BRACE,
  CLOSE_BRACKET,
  closingQuoteBefore,
  COLON,
  COMMA,
  cutBetweenEscapes,
  isSpaceCode,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
} from "./json-text";
import { SLICE_MS } from "./sliced-json-parse";

/**
 * How deep a body may nest arrays and objects. Far beyond any real request (a JSON Schema of tools rarely passes
 * 20), and far below the depth at which JSON.stringify, which prices tools and schemas and sends the body upstream,
 * overflows the stack (about 10,000): a body nested that deep is refused as a 400 before any quote, not a 500.
 */
export const MAX_JSON_DEPTH = 128;

/**
 * How many members one array or object of a body may have: beyond any real request (OpenAI takes 2,048 embedding
 * inputs and 8,192 tokens in one token array; a conversation of thousands of messages fits), and few enough that a
 * schema that finds every one of them wrong makes a few thousand issues, not millions.
 */
export const MAX_JSON_MEMBERS = 16_384;

/**
 * How many values (strings, numbers, literals, arrays, objects) a whole body may hold: what a schema may walk. A
 * request of 24 MB of text holds a few hundred; one of 100,000 messages with a few fields each, half a million.
 */
export const MAX_JSON_VALUES = 1_000_000;

/** How many characters the scan reads between two looks at the clock. */
const CLOCK_EVERY = 1 << 16;

/** One open array or object: how many members it has so far, and, in an object, where its current key is. */
interface Frame {
  isArray: boolean;
  members: number;
  /** A value has started since the last comma (or the open). */
  inMember: boolean;
  /** In an object: the next string is a key. */
  expectKey: boolean;
  keyStart: number;
  keyEnd: number;
}

/**
 * Refuses a body whose shape is out of bounds, before it is parsed: nested deeper than MAX_JSON_DEPTH, an array or
 * object of more than MAX_JSON_MEMBERS members, or more than MAX_JSON_VALUES values in all. One pass over the text
 * that builds nothing (strings skipped by the engine's own search), stopping at the first bound passed, so that what
 * a body of ten million junk elements costs is reading its first few thousand; a large text yields to the event loop
 * every few milliseconds. Malformed JSON is JSON.parse's to name: the scan only counts.
 */
export async function checkJsonShape(text: string): Promise<void> {
  const stack: Frame[] = [];
  let values = 0;
  let sliceStart = performance.now();
  let nextClock = CLOCK_EVERY;
  for (let at = 0; at < text.length; at++) {
    if (at >= nextClock) {
      nextClock = at + CLOCK_EVERY;
      if (performance.now() - sliceStart >= SLICE_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        sliceStart = performance.now();
      }
    }
    const code = text.charCodeAt(at);
    if (isSpaceCode(code)) continue;
    const frame = stack[stack.length - 1];
    if (code === COMMA) {
      if (frame) {
        frame.inMember = false;
        frame.expectKey = !frame.isArray;
      }
      continue;
    }
    if (code === CLOSE_BRACKET || code === CLOSE_BRACE) {
      stack.pop();
      continue;
    }
    if (code === COLON) continue;
    // The start of a value, or of an object's member (its key), or a further character of one (a number's digits).
    if (frame && !frame.inMember) {
      frame.inMember = true;
      if (++frame.members > MAX_JSON_MEMBERS) throw tooManyMembers(text, stack);
    }
    if (code === QUOTE) {
      // A long string is skipped a slice at a time (cut between escapes), yielding as the rest of the scan does.
      let close = -1;
      for (let from = at + 1; ;) {
        close = closingQuoteBefore(text, from - 1, from + CLOCK_EVERY);
        if (close >= 0 || from + CLOCK_EVERY >= text.length) break;
        from = cutBetweenEscapes(text, from + CLOCK_EVERY);
        if (performance.now() - sliceStart >= SLICE_MS) {
          await new Promise((resolve) => setImmediate(resolve));
          sliceStart = performance.now();
        }
      }
      if (close < 0) close = text.length;
      if (frame?.expectKey) {
        frame.expectKey = false;
        frame.keyStart = at + 1;
        frame.keyEnd = close;
      } else if (++values > MAX_JSON_VALUES) throw tooManyValues();
      at = close;
      continue;
    }
    if (code === OPEN_BRACKET || code === OPEN_BRACE) {
      if (++values > MAX_JSON_VALUES) throw tooManyValues();
      const isArray = code === OPEN_BRACKET;
      stack.push({ isArray, members: 0, inMember: false, expectKey: !isArray, keyStart: 0, keyEnd: 0 });
      if (stack.length > MAX_JSON_DEPTH) throw tooDeep();
      continue;
    }
    // A number or a literal: counted at its first character, its others skipped.
    if (++values > MAX_JSON_VALUES) throw tooManyValues();
    while (at + 1 < text.length && !isEndOfScalar(text.charCodeAt(at + 1))) at++;
  }
}

/** What ends a number or a literal: whitespace or a delimiter. */
function isEndOfScalar(code: number): boolean {
  return isSpaceCode(code) || code === COMMA || code === CLOSE_BRACKET || code === CLOSE_BRACE || code === COLON;
}

function tooDeep(): ApiError {
  return new ApiError(
    "invalid_request",
    `Request body is nested too deeply: arrays and objects may nest at most ${MAX_JSON_DEPTH} levels deep`,
  );
}

function tooManyValues(): ApiError {
  return new ApiError(
    "invalid_request",
    `Request body holds too many values: at most ${MAX_JSON_VALUES} strings, numbers, arrays and objects in all`,
  );
}

/** The container over the bound, named as a parameter (`messages`, `input[3]`), as a schema's error would name it. */
function tooManyMembers(text: string, stack: readonly Frame[]): ApiError {
  let path = "";
  for (let depth = 0; depth < stack.length - 1; depth++) {
    const frame = stack[depth]!;
    if (frame.isArray) path += `[${frame.members - 1}]`;
    else {
      const key = text.slice(frame.keyStart, Math.min(frame.keyEnd, frame.keyStart + 64));
      path += path ? `.${key}` : key;
    }
  }
  const what = stack[stack.length - 1]!.isArray ? "array" : "object";
  const param = path || null;
  return new ApiError(
    "invalid_request",
    `Invalid '${path || "body"}': an ${what} in a request body may have at most ${MAX_JSON_MEMBERS} members`,
    { param },
  );
}

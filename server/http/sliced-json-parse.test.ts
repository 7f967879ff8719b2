import { describe, expect, it } from "vitest";
import { MalformedJson, slicedJsonParse } from "./sliced-json-parse";

/**
 * Whether two values are the same as JSON.parse builds them: the same types and numbers (-0 apart from 0), the
 * same prototypes, the same own keys in the same order, each an enumerable writable data property.
 */
function same(a: unknown, b: unknown, path = "$"): string | undefined {
  if (typeof a !== typeof b) return `${path}: ${typeof a} vs ${typeof b}`;
  if (a === null || b === null || typeof a !== "object")
    return Object.is(a, b) ? undefined : `${path}: ${String(a)} vs ${String(b)}`;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return `${path}: prototypes differ`;
  const keysA = Reflect.ownKeys(a);
  const keysB = Reflect.ownKeys(b as object);
  if (keysA.join("\u0000") !== keysB.join("\u0000")) return `${path}: keys ${keysA.join(",")} vs ${keysB.join(",")}`;
  for (const key of keysA) {
    const descA = Object.getOwnPropertyDescriptor(a, key)!;
    const descB = Object.getOwnPropertyDescriptor(b, key)!;
    for (const flag of ["writable", "enumerable", "configurable"] as const) {
      if (descA[flag] !== descB[flag]) return `${path}.${String(key)}: ${flag} differs`;
    }
    const inner = same(descA.value, descB.value, `${path}.${String(key)}`);
    if (inner) return inner;
  }
  return undefined;
}

/** What JSON.parse and the sliced parser make of `text`: equal values, or both refusing it. */
async function compare(text: string, pieceChars: number): Promise<string | undefined> {
  let expected: unknown;
  let valid = true;
  try {
    expected = JSON.parse(text);
  } catch {
    valid = false;
  }
  let actual: Awaited<ReturnType<typeof slicedJsonParse>>;
  try {
    actual = await slicedJsonParse(text, pieceChars);
  } catch (error) {
    if (!(error instanceof MalformedJson)) throw error;
    return valid ? "refused valid JSON" : undefined;
  }
  if (!valid) return text.trim() === "" && actual === undefined ? undefined : "accepted invalid JSON";
  if (actual === undefined) return "took valid JSON for whitespace";
  return same(actual.value, expected);
}

/** A seeded generator, so that a failure can be replayed. */
function random(seed: number) {
  let state = seed >>> 0 || 1;
  const next = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
  const below = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]) => items[below(items.length)]!;
  return { next, below, pick };
}

const KEYS = ["a", "b", "__proto__", "constructor", "toString", "0", "1", "10", "-1", "", "é", "\\u0061", 'a\\"b'];
const STRING_PARTS = [
  "x",
  "hello",
  " ",
  '\\"',
  "\\\\",
  "\\/",
  "\\b\\f\\n\\r\\t",
  "\\u0041",
  "\\u00e9",
  "\\uD83D\\uDE00",
  "\\ud800",
  "\\uDC00",
  "\\uDBFF",
  "\u{1F600}",
  "\uD800",
  "\uDFFF",
  "é",
  "[",
  "]",
  "{",
  "}",
  ",",
  ":",
  "\\u005c",
  "\\u0022",
];
const NUMBERS = [
  "0",
  "-0",
  "1",
  "-1",
  "42",
  "3.14",
  "-0.0",
  "1e3",
  "1E-3",
  "2.5e+10",
  "1e400",
  "-1e400",
  "1e-400",
  "123456789012345678901234567890",
  "0.1",
  "9007199254740993",
  "5e-324",
];

function document(rng: ReturnType<typeof random>, size: number): string {
  const space = () => (rng.below(4) === 0 ? rng.pick([" ", "\n", "\t", "\r\n", "  "]) : "");
  const string = (parts: number) => {
    let text = "";
    for (let count = 0; count < parts; count++) text += rng.pick(STRING_PARTS);
    return `"${text}"`;
  };
  const value = (depth: number): string => {
    const kind = rng.below(depth > 4 ? 4 : 7);
    if (kind === 0) return rng.pick(NUMBERS);
    if (kind === 1) return rng.pick(["true", "false", "null"]);
    if (kind <= 3) return string(rng.below(rng.below(8) === 0 ? 400 : 12));
    const members: string[] = [];
    const count = rng.below(depth < 2 && rng.below(4) === 0 ? 40 : 6);
    for (let index = 0; index < count; index++) {
      const member = value(depth + 1);
      members.push(
        kind === 4
          ? `${space()}${member}${space()}`
          : `${space()}"${rng.pick(KEYS)}"${space()}:${space()}${member}${space()}`,
      );
    }
    return kind === 4 ? `[${members.join(",")}${space()}]` : `{${members.join(",")}${space()}}`;
  };
  let text = value(0);
  while (text.length < size) text = `[${text},${value(0)}]`;
  return `${space()}${text}${space()}`;
}

describe("the sliced JSON parser", () => {
  it("builds JSON.parse's value from tricky documents, cut into pieces of every size", async () => {
    const tricky = [
      '{"a":1,"b":2,"a":3}',
      '{"__proto__":{"polluted":true},"x":1}',
      '{"__proto__":1,"__proto__":[2]}',
      '{"b":1,"10":2,"a":3,"1":4,"b":5,"-1":6}',
      '{"constructor":{"prototype":1},"toString":"x"}',
      '["\\ud800","\\udc00x","\\uD83D\\uDE00","\uD83D","\uDE00","\\u0000"]',
      '"\\uD83D\\uDE00\\\\\\"\\u005c\\/\\b\\f\\n\\r\\t"',
      "[0,-0,-0.0,1e400,-1e400,1e-400,5e-324,9007199254740993,123456789012345678901234567890,0.1,2.5E+10]",
      `${"[".repeat(200)}${"]".repeat(200)}`,
      `{"a":${'{"b":'.repeat(150)}1${"}".repeat(150)}}`,
      ' \n\t\r {"a" : [ 1 , { } , [ ] , "" ] } \r\n ',
      "[    ]",
      '{"":"","\\u0061":"dup of a","a":0}',
      `"${"\\\\".repeat(20)}"`,
      `["${"x".repeat(50)}\\u00e9${"\\\\".repeat(7)}\\"", "${"\\u1234".repeat(30)}"]`,
      "true",
      "null",
      "-12.5e-3",
      "   ",
    ];
    for (const text of tricky) {
      for (const pieceChars of [8, 9, 10, 11, 12, 13, 16, 31, 64, 1000]) {
        expect(await compare(text, pieceChars), `${text} in pieces of ${pieceChars}`).toBeUndefined();
      }
    }
  });

  it("refuses exactly what JSON.parse refuses", async () => {
    const invalid = [
      "[1,]",
      "[ , 1]",
      "[,]",
      '{"a":1,}',
      '{,"a":1}',
      '{"a" 1}',
      '{"a":}',
      "{a:1}",
      "[1 2]",
      "[1,,2]",
      '["a"',
      '"abc',
      '"\\x"',
      '"\\u12"',
      '"\\u12G4"',
      '"a\nb"',
      '"tab\tin"',
      "[01]",
      "[1.]",
      "[.5]",
      "[+1]",
      "[1e]",
      "[-]",
      "[tru]",
      "[nul]",
      "[NaN]",
      "[Infinity]",
      "[1]]",
      "[[1]",
      "{}}",
      "{} {}",
      "1 2",
      "[}",
      "{]",
      '{"a":1]',
      "\uFEFF{}",
      '"\\',
      '["\\\\\\"]',
      "[" + "1,".repeat(50) + "]",
      '{"a":"' + "y".repeat(60) + '\\u00"}',
    ];
    for (const text of invalid) {
      expect(() => JSON.parse(text), text).toThrow();
      for (const pieceChars of [8, 9, 10, 12, 17, 64, 1000]) {
        expect(await compare(text, pieceChars), `${text} in pieces of ${pieceChars}`).toBeUndefined();
      }
    }
  });

  it("agrees with JSON.parse on random documents and on random corruptions of them, cut at random", async () => {
    const rng = random(48);
    for (let round = 0; round < 400; round++) {
      const text = document(rng, rng.below(3000));
      const pieceChars = 8 + rng.below(rng.below(2) === 0 ? 20 : 400);
      expect(await compare(text, pieceChars), `round ${round}, pieces of ${pieceChars}: ${text}`).toBeUndefined();
      for (let mutation = 0; mutation < 4; mutation++) {
        const at = rng.below(text.length + 1);
        const broken =
          rng.below(2) === 0
            ? text.slice(0, at) + text.slice(at + 1 + rng.below(3))
            : text.slice(0, at) +
              rng.pick([",", "]", "}", "[", "{", '"', "\\", ":", "1", " ", "x", "\n"]) +
              text.slice(at);
        expect(
          await compare(broken, pieceChars),
          `round ${round}.${mutation}, pieces of ${pieceChars}: ${broken}`,
        ).toBeUndefined();
      }
    }
  });
});

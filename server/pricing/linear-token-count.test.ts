import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import { DISTINCT_PIECES_PER_REQUEST, PIECE_CHARS, SLICE_CHARS, TokenCounter, wordStarts } from "./linear-token-count";
import { LONG_RUN_CHARS, mayHoldLongRun } from "./long-runs";

const exact = (text: string) => countTokens(text, { disallowedSpecial: new Set() });
const linear = (text: string) => new TokenCounter().count(text);

// Text of every kind a caller sends, none with a run of LONG_RUN_CHARS characters of one kind.
const ordinary = [
  "Hello, world! How's it going? I'd say we're fine; they'll see.",
  "The quick brown fox jumps over the lazy dog. 1234567890 3.14159 -42 1e10",
  "function add(a: number, b: number): number {\n  return a + b; // sum\n}\n\n\tconst x = [1, 2, 3];\r\n",
  JSON.stringify({ role: "user", content: "what is the weather?", tools: [{ name: "lookup", args: { q: "x" } }] }),
  "東京は日本の首都です。人口は約1400万人で、世界最大の都市圏の一つです。",
  "Ünïcödé façade naïve résumé — “quotes” and ‘apostrophes’ … ¿qué? ¡sí! Привет, мир! مرحبا بالعالم",
  "Emoji 😀😃😄 in text 👍🏽 and flags 🇫🇷🇩🇪, ZWJ 👨‍👩‍👧‍👦 families.",
  "<|endoftext|> looks special but is plain text <|im_start|>user",
  "https://example.com/path/to/resource?query=value&other=1#fragment mailto:someone@example.org",
  "# Title\n\n" + "-".repeat(80) + "\n| a | b |\n|---|---|\n| 1 | 2 |\n" + "=".repeat(120) + "\n",
  "    indented\n        more indented\n" + " ".repeat(100) + "deep\n\n\n\n",
  "ALLCAPS SHOUTING and CamelCaseIdentifiers with snake_case_names and kebab-case-names",
];

describe("counting tokens in linear time", () => {
  it("counts ordinary text exactly as gpt-tokenizer does, alone and as one long text", () => {
    for (const text of ordinary) expect(linear(text)).toBe(exact(text));
    // Longer than two slices: slices are cut where no pre-token crosses.
    const long = Array.from({ length: 2000 }, (_, index) => ordinary[index % ordinary.length]).join("\n");
    expect(long.length).toBeGreaterThan(2 * SLICE_CHARS);
    expect(linear(long)).toBe(exact(long));
  });

  it("counts a long run in pieces, off the whole count by at most a token per cut and never far below it", () => {
    const randomLetters = Array.from({ length: 3000 }, (_, index) =>
      String.fromCharCode(97 + (((index * 2654435761) >>> 7) % 26)),
    ).join("");
    const base64 = Buffer.from(Array.from({ length: 6000 }, (_, index) => (index * 2654435761) >>> 24)).toString(
      "base64",
    );
    const runs = [
      "a".repeat(5001),
      "😀".repeat(3000),
      randomLetters,
      " ".repeat(3000) + "x",
      "x\n" + "=".repeat(300) + "\nmore",
      "!" + "\n/".repeat(1000),
      base64,
      "before the run " + "Z".repeat(2000) + " after the run",
    ];
    for (const text of runs) {
      const cuts = Math.ceil(text.length / PIECE_CHARS) + 2;
      const split = linear(text);
      expect(Math.abs(split - exact(text)), text.slice(0, 20)).toBeLessThanOrEqual(cuts);
      expect(split).toBeLessThanOrEqual(Buffer.byteLength(text, "utf8"));
    }
    // Below a long run's length nothing is cut.
    expect(linear("=".repeat(LONG_RUN_CHARS - 1))).toBe(exact("=".repeat(LONG_RUN_CHARS - 1)));
  });

  it("passes over ordinary text without looking for long runs, and never misses one, wherever it starts", () => {
    const prose = Array.from({ length: 400 }, (_, index) => ordinary[index % 3]).join(" ");
    expect(mayHoldLongRun(prose)).toBe(false);
    const kinds = ["q".repeat(LONG_RUN_CHARS), " ".repeat(LONG_RUN_CHARS), "\n/".repeat(LONG_RUN_CHARS / 2)];
    for (const run of [...kinds, "\t".repeat(LONG_RUN_CHARS), `${" \t".repeat(LONG_RUN_CHARS / 2)}`]) {
      for (let offset = 0; offset < 2 * LONG_RUN_CHARS; offset++) {
        const text = `${prose.slice(0, 1000 + offset)}${run}${prose.slice(0, 700)}`;
        expect(mayHoldLongRun(text), `${JSON.stringify(run.slice(0, 4))} at ${offset}`).toBe(true);
      }
    }
  });

  it("counts 2 MB of one letter or of one emoji as their pieces add up", () => {
    // 128 copies of `a` are 16 tokens; an emoji is one.
    expect(linear("a".repeat(2_000_000))).toBe(250_000);
    expect(linear("😀".repeat(500_000))).toBe(500_000);
  });

  it("counts pieces past the request's bound as one token a byte, the same every time", () => {
    const pieces = DISTINCT_PIECES_PER_REQUEST + 100;
    const text = Array.from({ length: pieces * PIECE_CHARS }, (_, index) =>
      String.fromCharCode(97 + (((index * 2654435761) >>> 7) % 26)),
    ).join("");
    const counted = linear(text);
    expect(counted).toBe(linear(text));
    // The last 100 pieces at one token a byte, the others merged (about two letters a token).
    expect(counted).toBeGreaterThanOrEqual(100 * PIECE_CHARS);
    expect(counted).toBeLessThan(text.length);
    // One counter is one request: its texts share the bound.
    const counter = new TokenCounter();
    counter.count(text);
    const run = "q".repeat(2 * PIECE_CHARS);
    expect(counter.count(run)).toBe(2 * PIECE_CHARS);
    expect(linear(run)).toBe(2 * exact("q".repeat(PIECE_CHARS)));
  });

  it("stops soon past a limit, and says so", () => {
    const counter = new TokenCounter(1000);
    const counted = counter.count("a".repeat(24_000_000));
    expect(counter.stopped).toBe(true);
    expect(counted).toBeGreaterThan(1000);
    expect(counted).toBeLessThan(1000 + SLICE_CHARS);
    expect(counter.count("more")).toBe(0);
    expect(new TokenCounter(1000).stopped).toBe(false);
  });
});

describe("counting yielding to other work", () => {
  const prose = Array.from({ length: 60_000 }, (_, index) => ["alpha", "beta,", "gamma.", "42"][index % 4]).join(" ");
  const texts = [...ordinary, "a".repeat(300_000), prose, "😀".repeat(100_000), prose.replaceAll(" ", "\n")];

  it("counts what counting at once counts, over texts of every kind and length", async () => {
    const atOnce = new TokenCounter();
    const expected = texts.reduce((total, text) => total + atOnce.count(text), 0);
    expect(await new TokenCounter().countYielding(texts)).toBe(expected);
  });

  it("stops past its limit as counting at once does", async () => {
    const limit = 10_000;
    const atOnce = new TokenCounter(limit);
    texts.forEach((text) => atOnce.count(text));
    expect(atOnce.stopped).toBe(true);
    const yielding = new TokenCounter(limit);
    expect(await yielding.countYielding(texts)).toBeGreaterThan(limit);
    expect(yielding.stopped).toBe(true);
  });

  it("knows an input of more word starts than its limit is over it without counting it", async () => {
    const limit = 50_000;
    const words = `${prose} `.repeat(4);
    expect(wordStarts(words)).toBeGreaterThan(limit);
    const yielding = new TokenCounter(limit);
    const counted = await yielding.countYielding([words]);
    expect(yielding.stopped).toBe(true);
    // What it returns is the word starts it found, a lower bound of the count: it stopped at the first past the limit.
    expect(counted).toBeGreaterThan(limit);
    expect(counted).toBeLessThanOrEqual(wordStarts(words));
    expect(counted).toBeLessThan(new TokenCounter().count(words));
    // Within its limit, the same input is counted exactly.
    const within = new TokenCounter(10 * limit);
    expect(await within.countYielding([words])).toBe(new TokenCounter().count(words));
    expect(within.stopped).toBe(false);
  });

  it("lets other work run while it counts a long text", async () => {
    // Hundreds of milliseconds of counting: other work scheduled meanwhile runs before the count is done.
    const long = `${prose} `.repeat(8);
    let ranMeanwhile = false;
    setImmediate(() => (ranMeanwhile = true));
    const counting = new TokenCounter().countYielding([long]);
    expect(ranMeanwhile).toBe(false);
    expect(await counting).toBe(new TokenCounter().count(long));
    expect(ranMeanwhile).toBe(true);
  });
});

describe("word starts", () => {
  // Letters of every kind beside what may come before them: ASCII and other letters, marks, apostrophes
  // (contractions), digits, white space, line breaks, punctuation, emoji and symbols.
  const alphabet = [..."aZq'’0 9\n\r\t.,-_/\\\"(<@`{~éßЖ中ー\u0301😀$+=|"];
  let seed = 1;
  const random = (below: number) => {
    seed = (seed * 1_103_515_245 + 12_345) >>> 0;
    return seed % below;
  };
  const randomText = (length: number) =>
    Array.from({ length }, () => alphabet[random(alphabet.length)]).join("") + (random(2) ? " It's" : "");

  it("never exceed the tokens of a text, counted whole or in pieces", () => {
    for (let round = 0; round < 2000; round++) {
      const text = randomText(1 + random(60));
      expect(wordStarts(text)).toBeLessThanOrEqual(exact(text));
      expect(wordStarts(text)).toBeLessThanOrEqual(linear(text));
    }
    for (const text of [...ordinary, "a".repeat(5000), "a b ".repeat(5000), randomText(100_000)]) {
      expect(wordStarts(text)).toBeLessThanOrEqual(exact(text));
      expect(wordStarts(text)).toBeLessThanOrEqual(linear(text));
    }
  });

  it("are about the words of ordinary text, and the same counted in parts", () => {
    expect(wordStarts("The quick brown fox, it's 4th. Jumps\n(over) the-lazy dog")).toBe(11);
    expect(wordStarts("東京は日本の首都です。")).toBe(0);
    const text = randomText(10_000);
    const cut = 1 + random(text.length - 1);
    expect(wordStarts(text, 0, cut) + wordStarts(text, cut)).toBe(wordStarts(text));
  });
});

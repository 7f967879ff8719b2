import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { isWhiteSpace, LONG_RUN_CHARS, longRuns } from "./long-runs";

// Text that looks like a special token (`<|endoftext|>`) is ordinary text from a caller: count it as such.
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/** The pieces a long run is cut into: each cut may move the count by a token or two. */
export const PIECE_CHARS = 128;
/**
 * How many different pieces of long runs one request merges; a piece beyond them counts one token per UTF-8 byte,
 * the most it can be. Repeated pieces (a run of one character or one emoji) are merged once. The merge of a piece
 * costs about a microsecond a byte here, so this bounds the work at ~0.15 s whatever the body holds.
 */
export const DISTINCT_PIECES_PER_REQUEST = 1024;

/**
 * How long countYielding holds the event loop before it lets other work run. A slice of ordinary text takes ~10 ms
 * to count, a long run's piece ~0.1 ms, so no stall lasts much beyond twice this.
 */
export const YIELD_AFTER_MS = 10;

/** The length of a slice a long text is counted in, so a count can stop past its limit. */
export const SLICE_CHARS = 65_536;

/**
 * Where the slice of `text` from `start` ends: at a space after a character that is not white space, from SLICE_CHARS
 * on. No pre-token crosses there (letters, digits and punctuation never take a space after them) and o200k_base's one
 * look-ahead, `\s+(?!\S)`, sees white space there either way, so the slices count exactly what the whole text does.
 * Text with no such space over four slices (a long run, or a language written without spaces) is cut at the fourth,
 * where a token may be counted twice.
 */
function sliceEnd(text: string, start: number): number {
  if (text.length - start <= SLICE_CHARS) return text.length;
  const farthest = start + 4 * SLICE_CHARS;
  for (let space = text.indexOf(" ", start + SLICE_CHARS); space !== -1 && space < farthest;) {
    if (!isWhiteSpace(text.charCodeAt(space - 1))) return space;
    space = text.indexOf(" ", space + 1);
  }
  if (farthest >= text.length) return text.length;
  const last = text.charCodeAt(farthest - 1);
  return last >= 0xd800 && last <= 0xdbff ? farthest - 1 : farthest;
}

/** How many characters the word-start scan (wordStarts) reads between two chances to yield: ~1 ms. */
const SCAN_CHARS = 1 << 18;

/** A to z, either case. */
function isAsciiLetter(code: number): boolean {
  return ((code | 0x20) - 0x61) >>> 0 < 26;
}

/**
 * The word starts of `text` from `start` to `end`: the ASCII letters after anything but a letter, a mark or an
 * apostrophe (the text's start included), counted where the character before is ASCII. Each is the first letter of
 * its pre-token, which holds one at most: o200k_base's pre-tokens that hold letters are one optional character that
 * is no letter or digit, then letters and marks, then an optional contraction ('s, 'll...). A pre-token counts one
 * token at least, so this is a lower bound of the count of any text holding these characters counted in pieces (a
 * start at a piece's first character is still one of that piece's pre-tokens): ordinary text has one every 5 to 7
 * characters, and a body far over the limit is known to be without counting it.
 */
export function wordStarts(text: string, start = 0, end = text.length): number {
  let count = 0;
  let before = start === 0 ? 0x20 : text.charCodeAt(start - 1);
  for (let index = start; index < end; index++) {
    const code = text.charCodeAt(index);
    if (isAsciiLetter(code) && before < 0x80 && before !== 0x27 && !isAsciiLetter(before)) count++;
    before = code;
  }
  return count;
}

function exactCount(text: string): number {
  return text.length === 0 ? 0 : countTokens(text, PLAIN_TEXT);
}

/**
 * Counts the texts of one request in time linear in their length. Text without a long run counts exactly as
 * gpt-tokenizer counts it; a long run counts as the sum of its pieces, and the text either side of it apart.
 */
export class TokenCounter {
  // Made at the first long run: most requests have none.
  private pieces: Map<string, number> | undefined;
  /** What this counter has counted so far, over every text. */
  private counted = 0;
  /** The characters of the slices counted so far (texts counted at once are left out). */
  private sliced = 0;

  /**
   * `limit`: the count past which the request is refused anyway. Counting stops soon after passing it (a text is
   * counted in slices of SLICE_CHARS, a long run in pieces), so the work of a body far over the limit is the
   * limit's; the count returned is then below the true one, and `stopped` says so.
   */
  constructor(private readonly limit = Number.POSITIVE_INFINITY) {}

  /** Whether counting stopped past the limit (the counts returned are then lower bounds). */
  get stopped(): boolean {
    return this.counted > this.limit;
  }

  count(text: string): number {
    // Most texts of a request are short: counted at once, without stepping.
    if (text.length < LONG_RUN_CHARS) {
      if (this.stopped) return 0;
      const counted = exactCount(text);
      this.counted += counted;
      return counted;
    }
    const steps = this.countSteps(text);
    let step = steps.next();
    while (!step.done) step = steps.next();
    return step.value;
  }

  /**
   * The sum of the counts of `texts`, as count() would give them, letting other work run (a setImmediate) whenever
   * it has held the event loop for YIELD_AFTER_MS: a body of megabytes then stalls no stream, settlement or health
   * check for longer than that plus one step (a slice of text, or a long run's piece).
   */
  async countYielding(texts: readonly string[]): Promise<number> {
    let since = 0;
    // Lets other work run, and whether it is time to: the loop has been held for YIELD_AFTER_MS.
    const pause = async () => {
      await new Promise(setImmediate);
      since = performance.now();
    };
    const due = () => performance.now() - since > YIELD_AFTER_MS;
    // Reading and parsing the body held the loop just before: other work runs first.
    await pause();
    let chars = texts.length;
    for (const text of texts) chars += text.length;
    // A text of n characters has at most n / 2 word starts (rounded up): only an input that long may be found over
    // the limit by them, and it is scanned for them (wordStarts, a few nanoseconds a character against ~100 to
    // count) once what its first slices counted says the whole would be well past the limit (half as much again), so
    // an input under it, or near it, pays nothing.
    let scanned = chars <= 2 * (this.limit - this.counted);
    let total = 0;
    for (const text of texts) {
      const steps = this.countSteps(text);
      let step = steps.next();
      while (!step.done) {
        if (!scanned && this.sliced >= SLICE_CHARS && (this.counted / this.sliced) * chars > 1.5 * this.limit) {
          scanned = true;
          const starts = await this.wordStartsPast(texts, async () => (due() ? pause() : undefined));
          // Past the limit without counting the rest: stopped, the count a lower bound (as when counting stops).
          if (starts > this.limit) return (this.counted = Math.max(this.counted, starts));
        }
        if (due()) await pause();
        step = steps.next();
      }
      total += step.value;
    }
    return total;
  }

  /** The word starts of all of `texts`, or the first count of them past the limit; `pause` between parts. */
  private async wordStartsPast(texts: readonly string[], pause: () => Promise<void>): Promise<number> {
    let starts = 0;
    for (const text of texts) {
      for (let start = 0; start < text.length; start += SCAN_CHARS) {
        starts += wordStarts(text, start, Math.min(text.length, start + SCAN_CHARS));
        if (starts > this.limit) return starts;
        await pause();
      }
    }
    return starts;
  }

  /** Counts `text` slice by slice, stopping between steps (a slice, a long run's piece) where a caller may yield. */
  private *countSteps(text: string): Generator<void, number> {
    let total = 0;
    for (let start = 0; start < text.length && !this.stopped;) {
      const end = sliceEnd(text, start);
      const counted = yield* this.sliceSteps(start === 0 && end === text.length ? text : text.slice(start, end));
      this.counted += counted;
      this.sliced += end - start;
      total += counted;
      start = end;
      yield;
    }
    return total;
  }

  private *sliceSteps(text: string): Generator<void, number> {
    if (text.length < LONG_RUN_CHARS) return exactCount(text);
    let total = 0;
    let segmentStart = 0;
    for (const [start, end] of longRuns(text)) {
      total += exactCount(text.slice(segmentStart, start));
      yield;
      total += yield* this.runSteps(text.slice(start, end));
      segmentStart = end;
    }
    return total + exactCount(segmentStart === 0 ? text : text.slice(segmentStart));
  }

  private *runSteps(run: string): Generator<void, number> {
    let total = 0;
    for (let start = 0; start < run.length;) {
      let end = Math.min(start + PIECE_CHARS, run.length);
      const last = run.charCodeAt(end - 1);
      // A surrogate pair (an emoji) stays whole.
      if (end < run.length && last >= 0xd800 && last <= 0xdbff) end -= 1;
      total += this.pieceCount(run.slice(start, end));
      start = end;
      yield;
    }
    return total;
  }

  private pieceCount(piece: string): number {
    const pieces = (this.pieces ??= new Map());
    const known = pieces.get(piece);
    if (known !== undefined) return known;
    const count = pieces.size < DISTINCT_PIECES_PER_REQUEST ? exactCount(piece) : Buffer.byteLength(piece, "utf8");
    pieces.set(piece, count);
    return count;
  }
}

import {
  CLOSE_BRACE,
  CLOSE_BRACKET,
  closingQuoteBefore,
  COLON,
  COMMA,
  cutBetweenEscapes,
  isDelimiter,
  isSpace,
  isSpaceCode,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
  separatorAfter,
} from "./json-text";

/**
 * JSON.parse of a large text in pieces, so that no piece holds the event loop for long: JSON.parse itself builds
 * every value, from runs of whole members of one to two PIECE_CHARS (one call per run, not per member); what this
 * code adds is only the structure around them. A container longer than a piece is entered and its members parsed
 * run by run, each run cut where a guess puts it (which JSON.parse verifies) or else where counting brackets does;
 * a string longer than a piece is parsed in pieces cut between escapes (a JSON string's value is the concatenation
 * of its parts' values, lone surrogates included), and one with no escape is the text between its quotes. The
 * parser yields to the event loop between pieces once it has worked SLICE_MS. On this machine its CPU time is 1.4
 * to 1.7 times JSON.parse's for 24 MB of small objects or numbers, and no more than JSON.parse's for one long
 * text. Members are added as JSON.parse adds them: own data properties
 * (`__proto__` too), a repeated key keeping its first place and taking its last value.
 *
 * The value is JSON.parse's for any valid text; an invalid one throws MalformedJson (which piece failed says
 * nothing of JSON.parse's own message: the caller asks JSON.parse for that). Its shape (depth, members) is checked
 * before (json-shape.ts).
 */
export async function slicedJsonParse(text: string, pieceChars = PIECE_CHARS): Promise<{ value: unknown } | undefined> {
  return new SlicedParse(text, pieceChars).run();
}

/** The text is not valid JSON. */
export class MalformedJson extends Error {}

/** Characters in a piece: one JSON.parse call reads one or two, a millisecond or two of parsing at most. */
export const PIECE_CHARS = 64 * 1024;
/** Work between two yields to the event loop. */
export const SLICE_MS = 8;

type Container = unknown[] | Record<string, unknown>;

interface Frame {
  readonly container: Container;
  readonly isArray: boolean;
  /** The key this container takes in its parent (an object). */
  readonly key: string | undefined;
  /** "members": a run of members (or the close) comes next; "after": a comma or the close. */
  state: "members" | "after";
  /** In "members": whether a comma came last, so that a member must follow. */
  afterComma: boolean;
  /** What guessRun looks for: a comma, after the character that ended a member the last time. */
  separator: string;
  /** guessRun's wrong guesses in a row. */
  misses: number;
}

class SlicedParse {
  private at = 0;
  private readonly stack: Frame[] = [];
  private root: unknown;
  private sliceStart = performance.now();

  constructor(
    private readonly text: string,
    /** PIECE_CHARS, or less in tests (at least 8: an escape is 6 characters long), to cut small texts often. */
    private readonly pieceChars: number,
  ) {}

  /** The parsed value, or undefined when the text is only whitespace. */
  async run(): Promise<{ value: unknown } | undefined> {
    this.skipSpace();
    if (this.at === this.text.length) return undefined;
    await this.value(undefined);
    while (this.stack.length > 0) {
      await this.pause();
      const frame = this.stack[this.stack.length - 1]!;
      if (frame.state === "after") this.afterMember(frame);
      else await this.members(frame);
    }
    this.skipSpace();
    if (this.at !== this.text.length) throw new MalformedJson();
    return { value: this.root };
  }

  private async pause(): Promise<void> {
    if (performance.now() - this.sliceStart < SLICE_MS) return;
    await new Promise((resolve) => setImmediate(resolve));
    this.sliceStart = performance.now();
  }

  /** After a member: a comma, or the container's close. */
  private afterMember(frame: Frame): void {
    this.skipSpace();
    const code = this.text.charCodeAt(this.at);
    if (code === COMMA) {
      this.at++;
      frame.state = "members";
      frame.afterComma = true;
    } else if (code === (frame.isArray ? CLOSE_BRACKET : CLOSE_BRACE)) {
      this.at++;
      this.stack.pop();
      this.attach(frame.container, frame.key);
    } else throw new MalformedJson();
  }

  /** A run of whole members parsed at once, or, when the first member alone is longer than a piece, that one. */
  private async members(frame: Frame): Promise<void> {
    const { text } = this;
    const start = this.at;
    frame.state = "after";
    let run: { end: number; parsed: unknown } | undefined = this.guessRun(frame, start);
    if (!run) {
      const end = this.scanRun(start);
      if (end === undefined) return this.bigMember(frame);
      run = { end, parsed: parse(wrap(frame, text.slice(start, end))) };
    }
    this.at = run.end;
    const endsAtComma = text.charCodeAt(run.end) === COMMA;
    // Blank only in an empty container: not after a comma ("[1, ]"), nor before one ("[ , 1]").
    if ((frame.afterComma || endsAtComma) && isSpace(text, start, run.end)) throw new MalformedJson();
    if (endsAtComma) frame.separator = separatorAfter(text, run.end);
    const { parsed } = run;
    if (frame.isArray) for (const member of parsed as unknown[]) (frame.container as unknown[]).push(member);
    else for (const key of Object.keys(parsed as object)) define(frame.container, key, (parsed as never)[key]);
  }

  /**
   * A run cut at a guess, with no scanning: at the first separator (a comma, after the character that ended the
   * last run's last member) past a piece's length. JSON.parse accepts the run only if the cut is between two
   * members of this container: a cut inside a string leaves it unterminated, one inside a nested container leaves
   * the wrapper open. After two wrong guesses in a row the container is scanned instead.
   */
  private guessRun(frame: Frame, start: number): { end: number; parsed: unknown } | undefined {
    const { text, pieceChars } = this;
    if (frame.misses >= 2 || start + pieceChars >= text.length) return undefined;
    const found = text.slice(start + pieceChars, start + 2 * pieceChars).indexOf(frame.separator);
    if (found < 0) return undefined;
    const end = start + pieceChars + found + frame.separator.length - 1;
    try {
      const parsed: unknown = JSON.parse(wrap(frame, text.slice(start, end)));
      frame.misses = 0;
      return { end, parsed };
    } catch {
      frame.misses++;
      return undefined;
    }
  }

  /** The first member of a run, alone longer than a piece: its key, if in an object, then its value. */
  private async bigMember(frame: Frame): Promise<void> {
    let key: string | undefined;
    this.skipSpace();
    // An empty container with more than a piece of whitespace inside.
    if (!frame.afterComma && this.text.charCodeAt(this.at) === (frame.isArray ? CLOSE_BRACKET : CLOSE_BRACE)) return;
    if (!frame.isArray) {
      if (this.text.charCodeAt(this.at) !== QUOTE) throw new MalformedJson();
      key = await this.string();
      this.skipSpace();
      if (this.text.charCodeAt(this.at++) !== COLON) throw new MalformedJson();
      this.skipSpace();
    }
    return this.value(key);
  }

  /**
   * Where a run of whole members starting at `start` ends: at the container's close, or at a comma once the run
   * passes a piece's length. Undefined when the first member alone is longer than a piece. Brackets are counted
   * and strings skipped without checking anything else: JSON.parse checks the run.
   */
  private scanRun(start: number): number | undefined {
    const { text } = this;
    const end = text.length;
    const limit = start + this.pieceChars;
    let depth = 0;
    let lastComma = -1;
    for (let at = start; at < end; at++) {
      const code = text.charCodeAt(at);
      if (code === QUOTE) {
        const close = closingQuoteBefore(text, at, limit);
        if (close < 0) return lastComma < 0 ? undefined : lastComma;
        at = close;
      } else if (code === OPEN_BRACKET || code === OPEN_BRACE) depth++;
      if (at > limit) return lastComma < 0 ? undefined : lastComma;
      if (code === CLOSE_BRACKET || code === CLOSE_BRACE) {
        if (--depth < 0) return at;
      } else if (code === COMMA && depth === 0) lastComma = at;
    }
    return lastComma < 0 ? undefined : lastComma;
  }

  /** The value starting at `this.at` (after whitespace), known or taken to be longer than a piece. */
  private async value(key: string | undefined): Promise<void> {
    const code = this.text.charCodeAt(this.at);
    if (code === OPEN_BRACKET || code === OPEN_BRACE) {
      this.at++;
      const isArray = code === OPEN_BRACKET;
      this.stack.push({
        container: isArray ? [] : {},
        isArray,
        key,
        state: "members",
        afterComma: false,
        separator: ",",
        misses: 0,
      });
    } else if (code === QUOTE) this.attach(await this.string(), key);
    else {
      // A number or a literal: up to the next delimiter, parsed whole.
      const start = this.at;
      const end = this.text.length;
      while (this.at < end && !isDelimiter(this.text.charCodeAt(this.at))) this.at++;
      this.attach(parse(this.text.slice(start, this.at)), key);
    }
  }

  /**
   * The string whose opening quote is at `this.at`, in pieces cut between escapes (its end searched for piece by
   * piece too): a piece with no escape and no control character is its own value, any other is parsed. A string
   * with no escape at all is then the text between its quotes, neither parsed nor copied.
   */
  private async string(): Promise<string> {
    const { text, pieceChars } = this;
    const open = this.at;
    const parts: string[] = [];
    let plain = true;
    for (let from = open + 1; ;) {
      const close = closingQuoteBefore(text, from - 1, from + pieceChars);
      if (close < 0 && from + pieceChars >= text.length) throw new MalformedJson();
      const to = close >= 0 ? close : cutBetweenEscapes(text, from + pieceChars);
      const piece = text.slice(from, to);
      if (NOT_PLAIN.test(piece)) {
        plain = false;
        parts.push(parse(`"${piece}"`) as string);
      } else parts.push(piece);
      if (close >= 0) {
        this.at = close + 1;
        if (plain) return text.slice(open + 1, close);
        return parts.length === 1 ? parts[0]! : parts.join("");
      }
      from = to;
      await this.pause();
    }
  }

  /** A finished value into the container on top of the stack, or as the root. */
  private attach(value: unknown, key: string | undefined): void {
    const parent = this.stack[this.stack.length - 1];
    if (!parent) this.root = value;
    else if (parent.isArray) (parent.container as unknown[]).push(value);
    else define(parent.container, key!, value);
  }

  private skipSpace(): void {
    const { text } = this;
    while (this.at < text.length && isSpaceCode(text.charCodeAt(this.at))) this.at++;
  }
}

/** What makes a piece of a string more than its own text: an escape, or a control character (JSON.parse's error). */
// Anything outside space to "[" and "]" to U+FFFF: a code unit under 0x20, or a backslash (0x5c).
const NOT_PLAIN = /[^ -[\]-\uffff]/;

/** A run of members as a text JSON.parse reads: in the brackets or braces of its container. */
function wrap(frame: Frame, members: string): string {
  return frame.isArray ? `[${members}]` : `{${members}}`;
}

/** JSON.parse, its failure as MalformedJson. */
function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new MalformedJson();
  }
}

/** A member as JSON.parse adds it: an own data property, also for `__proto__`; a repeated key keeps its place. */
function define(container: Container, key: string, value: unknown): void {
  Object.defineProperty(container, key, { value, writable: true, enumerable: true, configurable: true });
}

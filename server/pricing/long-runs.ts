/**
 * A run of this many characters without a change between white space and the rest (or of `\r`, `\n` and `/`) is
 * counted in pieces. gpt-tokenizer's byte-pair merge is quadratic in the length of one pre-token (50,000 copies of
 * one letter took ~2.3 s) and its pre-tokenizer slow on such runs, and every pre-token longer than twice this holds
 * such a run (a pre-token is one optional character, letters or punctuation, then `\r`, `\n` and `/`; or white
 * space). Ordinary prose and code have none; a URL, a base64 blob or minified JSON may, and count in pieces.
 */
export const LONG_RUN_CHARS = 256;
/** JavaScript's `\s`, which o200k_base's pre-tokenizer uses: tab to carriage return, space and Unicode's spaces. */
export function isWhiteSpace(code: number): boolean {
  if (code <= 0x20) return code === 0x20 || (code >= 0x09 && code <= 0x0d);
  if (code < 0xa0) return false;
  return (
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

/**
 * The long runs of `text` as [start, end) pairs, in order and apart: a loop over its code units, since V8's regular
 * expressions take ~40 ns a character over such a run.
 */
export function longRuns(text: string): [number, number][] {
  if (!mayHoldLongRun(text)) return [];
  const runs: [number, number][] = [];
  const add = (start: number, end: number) => {
    if (end - start < LONG_RUN_CHARS) return;
    const last = runs.at(-1);
    if (last && start <= last[1]) last[1] = Math.max(last[1], end);
    else runs.push([start, end]);
  };
  let spaceStart = 0; // the run of white space, or of the rest, that text[index] continues
  let lineStart = 0; // the run of \r, \n and /
  let inSpace = text.length > 0 && isWhiteSpace(text.charCodeAt(0));
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    const space = isWhiteSpace(code);
    if (space !== inSpace) {
      add(spaceStart, index);
      spaceStart = index;
      inSpace = space;
    }
    if (!(code === 0x0a || code === 0x0d || code === 0x2f)) {
      // A run of \r, \n and / that ends inside a run of one kind is within it; it matters only across kinds.
      add(lineStart, index);
      lineStart = index + 1;
    }
  }
  add(spaceStart, text.length);
  add(lineStart, text.length);
  return runs
    .sort((first, second) => first[0] - second[0])
    .reduce<[number, number][]>((merged, run) => {
      const last = merged.at(-1);
      if (last && run[0] <= last[1]) last[1] = Math.max(last[1], run[1]);
      else merged.push(run);
      return merged;
    }, []);
}

/** The windows mayHoldLongRun looks at: any run of LONG_RUN_CHARS holds a whole one, at a multiple of its length. */
const RUN_WINDOW = LONG_RUN_CHARS / 2;

/**
 * Whether `text` may hold a long run, looked at window by window with the engine's own search: a window holding a
 * space with a character other than white space beside it (inside the window) is no part of a long run of either
 * kind, nor of \r, \n and / (a space is none of those). Ordinary text has such a space in every window, so it is
 * passed over at a few nanoseconds a window where longRuns' loop takes one or two a character; a window without one
 * (a run, minified JSON, text without spaces) sends the whole text to that loop, so the runs found are the same.
 */
export function mayHoldLongRun(text: string): boolean {
  for (let start = 0; start + RUN_WINDOW <= text.length; start += RUN_WINDOW) {
    const end = start + RUN_WINDOW;
    for (let space = text.indexOf(" ", start); ; space = text.indexOf(" ", space + 1)) {
      if (space < 0 || space >= end) return true;
      if (space + 1 < end && !isWhiteSpace(text.charCodeAt(space + 1))) break;
      if (space > start && !isWhiteSpace(text.charCodeAt(space - 1))) break;
    }
  }
  return false;
}

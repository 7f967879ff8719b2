/** What the sliced JSON parser (sliced-json-parse.ts) reads in the text between calls to JSON.parse. */

export const SPACE = 0x20;
export const TAB = 0x09;
export const LF = 0x0a;
export const CR = 0x0d;
export const QUOTE = 0x22;
export const COMMA = 0x2c;
export const COLON = 0x3a;
export const BACKSLASH = 0x5c;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACKET = 0x5d;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;
export const LOWER_U = 0x75;

/**
 * The index of the quote that closes the string whose opening quote, or an escaped character, is at `after`
 * (a quote preceded by an even run of backslashes), if it comes before `limit`; else -1.
 */
export function closingQuoteBefore(text: string, after: number, limit: number): number {
  // Searched in a slice of the text (a view, not a copy): indexOf on the whole text would run to its end each time.
  const window = text.slice(after + 1, limit);
  for (let at = -1; ;) {
    at = window.indexOf('"', at + 1);
    if (at < 0) return -1;
    if (backslashesBefore(text, after + 1 + at) % 2 === 0) return after + 1 + at;
  }
}

/** The separator to look for next: the comma at `comma`, with the character before it if that ends a value. */
export function separatorAfter(text: string, comma: number): string {
  const before = text.charCodeAt(comma - 1);
  return before === CLOSE_BRACE || before === CLOSE_BRACKET || before === QUOTE ? `${text[comma - 1]},` : ",";
}

/**
 * A cut at or just before `cut` that splits no escape: not after an odd run of backslashes (the next character
 * is escaped), nor inside the four hex digits of a `\u` escape.
 */
export function cutBetweenEscapes(text: string, cut: number): number {
  let at = cut;
  if (backslashesBefore(text, at) % 2 === 1) at--;
  for (let u = at - 1; u >= at - 4 && u > 0; u--) {
    if (text.charCodeAt(u) === LOWER_U && backslashesBefore(text, u) % 2 === 1) return u - 1;
  }
  return at;
}

export function backslashesBefore(text: string, at: number): number {
  let count = 0;
  while (text.charCodeAt(at - 1 - count) === BACKSLASH) count++;
  return count;
}

export function isSpaceCode(code: number): boolean {
  return code === SPACE || code === LF || code === CR || code === TAB;
}

export function isSpace(text: string, from: number, to: number): boolean {
  for (let at = from; at < to; at++) if (!isSpaceCode(text.charCodeAt(at))) return false;
  return true;
}

export function isDelimiter(code: number): boolean {
  return isSpaceCode(code) || code === COMMA || code === CLOSE_BRACKET || code === CLOSE_BRACE;
}

import { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, OPEN_BRACE, OPEN_BRACKET, QUOTE } from "./json-text";

/**
 * How deep a body may nest arrays and objects. Far beyond any real request (a JSON Schema of tools rarely passes
 * 20), and far below the depth at which JSON.stringify, which prices tools and schemas and sends the body upstream,
 * overflows the stack (about 10,000): a body nested that deep is refused as a 400 before any quote, not a 500.
 */
export const MAX_JSON_DEPTH = 128;

/**
 * Whether valid JSON (JSON.parse accepted it) nests deeper than `limit`: brackets and braces counted outside strings,
 * each string skipped to its closing quote by the engine's own search, so that a body of long texts costs little
 * (under a microsecond for a 1 KB request, about a tenth of JSON.parse's time at most). A body too short to
 * hold limit + 1 pairs is not read.
 */
export function nestedDeeperThan(text: string, limit: number): boolean {
  if (text.length < 2 * (limit + 1)) return false;
  let depth = 0;
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (code === QUOTE) at = closingQuote(text, at);
    else if (code === OPEN_BRACKET || code === OPEN_BRACE) {
      if (++depth > limit) return true;
    } else if (code === CLOSE_BRACKET || code === CLOSE_BRACE) depth--;
  }
  return false;
}

/**
 * The index of the quote that closes the string opened at `open` (one preceded by an even run of backslashes), or
 * the text's length when none does.
 */
export function closingQuote(text: string, open: number): number {
  let at = open;
  for (;;) {
    at = text.indexOf('"', at + 1);
    if (at < 0) return text.length;
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
}

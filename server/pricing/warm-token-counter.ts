import { TokenCounter } from "./linear-token-count";

/**
 * Texts of every kind a quote meets, as both kinds of string V8 keeps (one byte a character, for text that is all
 * Latin-1; two otherwise), whose code it compiles apart: prose with digits, punctuation and line breaks, code, long
 * runs (counted in pieces) of one letter, of `=` and of line breaks; and text in other scripts, emoji.
 */
function samples(): string[] {
  const prose =
    "The ledger settles 42 payments, quietly: each one's harbor is north.\nA river of 1,024 tokens & more; ";
  const code = 'function quote(body) { return { "amount": 1007, "tokens": [1, 2, 3] }; }\n';
  const runs = `${"a".repeat(4000)} ${"=".repeat(600)} ${"/\n".repeat(300)} `;
  const other = "料金は入力トークンで決まります。Ценообразование по токенам. ";
  const latin = `${prose.repeat(300)}${code.repeat(100)}${runs}`;
  return [latin, `${latin}${other.repeat(100)}${"\u{1F600}".repeat(1000)} ${runs}`];
}

/**
 * Counts sample texts a few times, so that the counting code is compiled (V8 optimises a function only once it has
 * run a while, and the tokenizer's regular expression once it has matched enough): run when the process starts,
 * before it serves, so that the first long input quoted does not hold the event loop while that happens (measured:
 * a cold process's first 2 MB quote of one letter held it 40-120 ms in one step, scanning a 256K-character slice for
 * long runs, which takes ~1 ms compiled). About 0.1-0.2 s.
 */
export function warmTokenCounter(): void {
  const texts = samples();
  for (let round = 0; round < 4; round++) for (const text of texts) new TokenCounter().count(text);
}

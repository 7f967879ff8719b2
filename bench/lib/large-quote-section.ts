// The benchmark's section on quoting the largest bodies: a 2 MB chat message of one letter, of one emoji and of
// ordinary text, each quoted unpaid (402) while 20 prepaid streams run through the same app process, first on a
// process started for it (its first large quotes), then again (warm); and a body of the largest size accepted,
// 24 MB of text of many different words, far over the input limit, refused. A quote that held the app's event loop
// would hold those streams' deltas: the largest extra delay of a delta beyond the upstream's pacing is the longest
// stall the streams saw. The same streams alone give the machine's own figure.
import { MAX_REQUEST_BODY_BYTES } from "../../config/limits";
import { ms } from "./stats";

const BODY_BYTES = 2_000_000;
const WORDS = ["ledger", "harbor", "the", "of", "quietly", "settles,", "and", "river", "42", "north."];

/** The three 2 MB message texts, by name. */
function largeTexts(): [string, string][] {
  let prose = "";
  for (let index = 0; prose.length < BODY_BYTES; index++) prose += `${WORDS[(index * 7) % WORDS.length]} `;
  return [
    ["one letter", "a".repeat(BODY_BYTES)],
    // An emoji is 4 bytes of UTF-8.
    ["one emoji", "\u{1F600}".repeat(BODY_BYTES / 4)],
    ["ordinary text", prose.slice(0, BODY_BYTES)],
  ];
}

/**
 * `chars` of text of many different words (made up from syllables, so that the tokenizer's cache of words helps
 * little), with commas and sentences: what counts slowest per character among ordinary texts.
 */
export function manyWordsText(chars: number): string {
  const syllables = ["ka", "lo", "mer", "ti", "va", "sun", "dre", "po", "lin", "ros", "te", "qua", "bri", "no", "xel"];
  let seed = 7;
  const next = (below: number) => {
    seed = (seed * 1_103_515_245 + 12_345) >>> 0;
    return seed % below;
  };
  const parts: string[] = [];
  let length = 0;
  while (length < chars) {
    let word = "";
    for (let count = 1 + next(4); count > 0; count--) word += syllables[next(syllables.length)];
    const end = next(20);
    word += end === 0 ? "." : end === 1 ? "," : "";
    parts.push(word);
    length += word.length + 1;
  }
  return parts.join(" ").slice(0, chars);
}

/**
 * `appUrl`: a process started for this section (its first large quotes are the cold figures); `streamOnce` runs one
 * prepaid stream through it and gives the delays of its deltas beyond the upstream's pacing. The lines to print.
 */
export async function largeQuoteSection(
  appUrl: string,
  streamOnce: () => Promise<{ gaps: number[] }>,
  streams: number,
): Promise<string[]> {
  const lines: string[] = [];
  const alongside = async (work: () => Promise<string>) => {
    const running = Array.from({ length: streams }, () => streamOnce());
    // The quote lands once the streams are flowing.
    await new Promise((resolve) => setTimeout(resolve, 150));
    const result = await work();
    const gaps = (await Promise.all(running)).flatMap((run) => run.gaps);
    return { result, longestStall: Math.max(...gaps) };
  };
  const quote = (body: string, status: number) => async () => {
    const started = performance.now();
    const response = await fetch(`${appUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    const text = await response.text();
    if (response.status !== status) throw new Error(`a large quote answered ${response.status}: ${text.slice(0, 200)}`);
    return `answered ${response.status} in ${ms(performance.now() - started)}`;
  };
  const chat = (text: string) =>
    JSON.stringify({ model: "vendor-a/gpt-6-luna", messages: [{ role: "user", content: text }] });
  const alone = await alongside(async () => "");
  lines.push(`${streams} prepaid streams alone: longest extra delay of a delta ${ms(alone.longestStall)}`);
  for (const round of ["a fresh process", "again (warm)"]) {
    for (const [name, text] of largeTexts()) {
      const { result, longestStall } = await alongside(quote(chat(text), 402));
      lines.push(
        `${round}, 2 MB of ${name}: ${result}; beside it, the longest extra delay of a delta of ${streams} streams ${ms(longestStall)}`,
      );
    }
  }
  // The largest body accepted, of ordinary text far over the input limit: refused (400) without counting it all.
  const largest = chat(manyWordsText(MAX_REQUEST_BODY_BYTES - 200));
  const { result, longestStall } = await alongside(quote(largest, 400));
  lines.push(
    `${(Buffer.byteLength(largest) / 2 ** 20).toFixed(0)} MB of ordinary text, over the input limit: ${result}; the longest extra delay of a delta beside it ${ms(longestStall)}`,
  );
  return lines;
}

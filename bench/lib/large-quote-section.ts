// The benchmark's section on quoting the largest bodies: a 2 MB chat message of one letter, of one emoji and of
// ordinary text, each quoted unpaid (402) while 20 prepaid streams run through the same app process. A quote that
// held the app's event loop would hold those streams' deltas: the largest extra delay of a delta beyond the
// upstream's pacing is the longest stall the streams saw. The same streams alone give the machine's own figure.
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
 * `streamOnce` runs one prepaid stream and gives the delays of its deltas beyond the upstream's pacing; the lines
 * to print.
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
  const alone = await alongside(async () => "");
  lines.push(`${streams} prepaid streams alone: longest extra delay of a delta ${ms(alone.longestStall)}`);
  for (const [name, text] of largeTexts()) {
    const body = JSON.stringify({ model: "vendor-a/gpt-6-luna", messages: [{ role: "user", content: text }] });
    const { result, longestStall } = await alongside(async () => {
      const started = performance.now();
      const response = await fetch(`${appUrl}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      await response.arrayBuffer();
      return `answered ${response.status} in ${ms(performance.now() - started)}`;
    });
    lines.push(
      `2 MB of ${name}: ${result}; beside it, the longest extra delay of a delta of ${streams} streams ${ms(longestStall)}`,
    );
  }
  return lines;
}

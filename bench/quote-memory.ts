// Child of bench/run.ts: quotes one large chat request in a fresh process, so that its peak memory (maxRSS)
// belongs to the quote alone, then times quote and bare count in alternating rounds (medians), and prints the
// figures as JSON.
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { getNetwork } from "../networks";
import { defaultCatalog } from "../config/catalog/default-catalog";
import { chatCompletions } from "../server/endpoints/chat-completions";

const tokens = Number(process.argv[2] ?? 1_000_000);
// One token a word, so that the request holds about `tokens` tokens and stays within the input limit.
const words = ["alpha", "beta", "gamma", "delta", "ledger", "harbor"];
const text = Array.from({ length: tokens }, (_, index) => words[index % words.length]).join(" ");
const body = { model: "vendor-a/gpt-6-luna", messages: [{ role: "user", content: text }], max_tokens: 1 };
const network = getNetwork("eip155:137");
// What the service does with the parsed body before its 402: validate, count and price.
const endpoint = chatCompletions(defaultCatalog());
// A long input is counted yielding to other work (a promise), as the service counts it.
const quoteRequest = () => endpoint.quote(endpoint.parse(body), network);
countTokens("warm up the encoder", { disallowedSpecial: new Set() });

const maxRssBefore = process.resourceUsage().maxRSS;
const timed = async <T>(run: () => T | Promise<T>): Promise<[T, number]> => {
  const started = performance.now();
  return [await run(), performance.now() - started];
};
// The first quote alone sets the peak memory figure (maxRSS only grows).
const [quote, firstQuoteMs] = await timed(quoteRequest);
const peakGrowthMb = (process.resourceUsage().maxRSS - maxRssBefore) / 1024;
// Then both are timed in alternating order, so that neither always runs on the other's warm-up.
const quoteTimes = [firstQuoteMs];
const bareTimes: number[] = [];
let bare = 0;
for (let round = 0; round < 4; round++) {
  const countBare = async () => {
    const [count, elapsed] = await timed(() => countTokens(text, { disallowedSpecial: new Set() }));
    bare = count;
    bareTimes.push(elapsed);
  };
  const countQuote = async () => quoteTimes.push((await timed(quoteRequest))[1]);
  if (round % 2 === 0) {
    await countBare();
    await countQuote();
  } else {
    await countQuote();
    await countBare();
  }
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const quoteMs = median(quoteTimes);
const bareMs = median(bareTimes);
console.log(
  JSON.stringify({
    quoteMs,
    bareMs,
    inputTokens: quote.display.input_tokens,
    bareTokens: bare,
    peakGrowthMb,
    baselineMb: maxRssBefore / 1024,
  }),
);

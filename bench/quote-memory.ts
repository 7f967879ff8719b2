// Child of bench/run.ts: quotes one large chat request in a fresh process, so that its peak memory (maxRSS)
// belongs to the quote alone, and prints the figures as JSON.
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { getNetwork } from "../networks";
import { quoteRequest } from "../server/pricing/quote-request";

const tokens = Number(process.argv[2] ?? 1_000_000);
const words = ["alpha", "beta", "gamma", "delta", "x402", "ledger"];
const text = Array.from({ length: tokens }, (_, index) => words[index % words.length]).join(" ");
const body = { model: "vendor-a/gpt-6-luna", messages: [{ role: "user", content: text }], max_tokens: 1 };
const network = getNetwork("eip155:137");
countTokens("warm up the encoder", { disallowedSpecial: new Set() });

const maxRssBefore = process.resourceUsage().maxRSS;
let started = performance.now();
const quote = quoteRequest("/v1/chat/completions", body, network);
const quoteMs = performance.now() - started;
const peakGrowthMb = (process.resourceUsage().maxRSS - maxRssBefore) / 1024;
started = performance.now();
const bare = countTokens(text, { disallowedSpecial: new Set() });
const bareMs = performance.now() - started;
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

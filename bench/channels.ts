// npm run bench:channels [-- <calls>]: the benchmark's section 12 (bench/lib/channel-section.ts) alone, on the same
// embedded stack, with `calls` calls each way (200 unless told, as in `npm run bench`). Before it, the prepaid path is
// warmed up as section 1 warms it (2,500 calls), so that the prepaid baseline is not measured while its code is still
// being optimised; the voucher, exact and prepaid calls then take turns, and every figure is against the prepaid
// calls of this run.
import { buyBenchKey } from "./lib/buy-bench-key";
import { startBenchStack } from "./lib/bench-stack";
import { claimBenchChannels } from "./lib/channel-claim";
import { channelSection } from "./lib/channel-section";
import { runConcurrently } from "./lib/stats";

const calls = Number(process.argv.slice(2).find((argument) => /^\d+$/.test(argument)) ?? 200);

const stack = await startBenchStack({ deltaGapMs: 20, deltas: 64 });
try {
  const key = await buyBenchKey(stack.appUrl);
  const body = JSON.stringify({
    model: "vendor-a/gpt-6-luna",
    messages: [{ role: "user", content: "benchmark" }],
    max_tokens: 16,
  });
  await runConcurrently(2500, 1, async () => {
    const response = await fetch(`${stack.appUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body,
    });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`prepaid warm-up call answered ${response.status}: ${text}`);
  });
  console.log(`## 12. Channels (alone): ${calls} calls each way, in turn`);
  for (const line of await channelSection(stack, key, calls, () => claimBenchChannels(stack))) console.log(line);
} finally {
  await stack.stopAll();
}

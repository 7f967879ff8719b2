// npm run bench:quote [-- --quick]: the benchmark's figures of quoting alone (bench/run.ts runs them among the
// others): section 3, 402 quotes beside GET /v1/models (more rounds than the whole benchmark takes, the same
// measurement), and section 5's large bodies beside prepaid streams, on an app process started for it.
import { buyBenchKey } from "./lib/buy-bench-key";
import { startBenchStack } from "./lib/bench-stack";
import { startFreshApp } from "./lib/fresh-app";
import { largeQuoteSection } from "./lib/large-quote-section";
import { pidListeningOn } from "./lib/process-memory";
import { quoteRateSection } from "./lib/quote-rate-section";
import { timedStream } from "./lib/timed-stream";

const quick = process.argv.includes("--quick");
const DELTA_GAP_MS = 20;
const stack = await startBenchStack({ deltaGapMs: DELTA_GAP_MS, deltas: 64 });
try {
  const body = { model: "vendor-a/gpt-6-luna", messages: [{ role: "user", content: "benchmark" }], max_tokens: 16 };
  const appPid = pidListeningOn(Number(new URL(stack.appUrl).port));
  if (appPid === undefined) throw new Error("app server process not found");
  console.log("## 3. 402 quote throughput vs GET /v1/models of the same app, 16 connections");
  console.log(
    await quoteRateSection({
      appUrl: stack.appUrl,
      appPid,
      body: JSON.stringify(body),
      seconds: quick ? 1 : 2,
      rounds: quick ? 1 : 4,
    }),
  );
  const key = await buyBenchKey(stack.appUrl);
  const streamBody = JSON.stringify({ ...body, stream: true, max_tokens: 400 });
  const streams = quick ? 4 : 20;
  console.log(`\n## 5. Quoting 2 MB bodies (402) beside ${streams} prepaid streams, and refusing the largest body`);
  const fresh = await startFreshApp(stack.appUrl);
  try {
    const stream = () =>
      timedStream(`${fresh.url}/v1/chat/completions`, { authorization: `Bearer ${key}` }, streamBody, DELTA_GAP_MS);
    await Promise.all(Array.from({ length: quick ? 4 : 60 }, stream));
    for (const line of await largeQuoteSection(fresh.url, stream, streams)) console.log(line);
  } finally {
    await fresh.stop();
  }
} finally {
  await stack.stopAll();
}

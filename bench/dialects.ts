// npm run bench:dialects [-- --quick]: the benchmark's section 13 alone (bench/run.ts runs it among the others): the
// same prepaid call as chat, as a Codex-shaped Responses call and as a Messages call, whole and streamed, and the app
// server's CPU each takes.
import { startBenchStack } from "./lib/bench-stack";
import { dialectSection } from "./lib/dialect-section";

const quick = process.argv.includes("--quick");
const DELTAS = 64;
const stack = await startBenchStack({ deltaGapMs: 20, deltas: DELTAS });
try {
  console.log("## 13. Dialects: the same call as chat, as a Codex-shaped Responses call and as a Messages call");
  const runs = quick ? { calls: 4, streams: 2, rounds: 1 } : { calls: 400, streams: 64, rounds: 4 };
  for (const line of await dialectSection({ stack, ...runs, deltas: DELTAS })) console.log(line);
} finally {
  await stack.stopAll();
}

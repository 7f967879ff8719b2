// npm run bench:limits [-- --quick]: the benchmark's section 14 alone (bench/run.ts runs it among the others): a
// prepaid call with the key's rate limits off and on, latency and app CPU.
import { startBenchStack } from "./lib/bench-stack";
import { limitsSection } from "./lib/limits-section";

const quick = process.argv.includes("--quick");
const stack = await startBenchStack({ deltaGapMs: 20, deltas: 64 });
try {
  console.log("## 14. Rate limits: a prepaid call with the key's limits off and on (two app servers, one SQLite file)");
  for (const line of await limitsSection(stack, quick ? 10 : 2000)) console.log(line);
} finally {
  await stack.stopAll();
}

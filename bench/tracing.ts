// npm run bench:tracing [-- --quick]: the benchmark's section 15 alone (bench/run.ts runs it among the others): a
// prepaid call with tracing off and on (to an OTLP collector), latency and app CPU.
import { startBenchStack } from "./lib/bench-stack";
import { tracingSection } from "./lib/tracing-section";

const quick = process.argv.includes("--quick");
const stack = await startBenchStack({ deltaGapMs: 20, deltas: 64 });
try {
  console.log("## 15. Tracing: a prepaid call with tracing off and on (two app servers, one SQLite file)");
  for (const line of await tracingSection(stack, quick ? 10 : 4000)) console.log(line);
} finally {
  await stack.stopAll();
}

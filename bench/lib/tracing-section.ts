// What tracing costs a prepaid call: two fresh app servers over the bench stack's database, one with tracing off and
// one exporting every span to an OTLP/HTTP collector in this process (which takes them and keeps a count), called
// in turn. The CPU compared is each process's over a round of calls, the batches of spans sent between calls
// included (each round waits for its last batch); the figure is the median of the rounds' ratios.
import type { RunningStack } from "../../cli/dev-stack/start-stack";
import { startOtlpReceiver } from "../../e2e/support/otlp-receiver";
import { prepaidPair } from "./prepaid-pair";
import { ms, percentile } from "./stats";

export async function tracingSection(stack: RunningStack, calls: number): Promise<string[]> {
  const collector = await startOtlpReceiver();
  try {
    const delayMs = 500;
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_BSP_SCHEDULE_DELAY: String(delayMs) };
    const rounds = calls >= 500 ? 8 : 1;
    const { stock: off, changed: on } = await prepaidPair(stack, calls, env, {
      rounds,
      settleMs: delayMs + 200,
      freshStock: true,
    });
    const ratios = on.wholeCpu.map((cpu, round) => cpu / off.wholeCpu[round]!);
    const median = (values: number[]) => percentile(values, 50);
    const [offCpu, onCpu, ratio] = [median(off.wholeCpu), median(on.wholeCpu), median(ratios)];
    const spread = ratios.map((value) => `${((value - 1) * 100).toFixed(1)}%`).join(", ");
    return [
      `prepaid chat completion, ${calls} each in turn (${rounds} rounds): tracing off p50 ${ms(off.p50)}, CPU ${ms(offCpu)} per call; tracing on p50 ${ms(on.p50)}, CPU ${ms(onCpu)} per call (${collector.spans.length} spans received)`,
      `tracing on costs ${((ratio - 1) * 100).toFixed(1)}% more CPU per call (target <= 10%), the median of the rounds' ${spread}`,
    ];
  } finally {
    await collector.stop();
  }
}

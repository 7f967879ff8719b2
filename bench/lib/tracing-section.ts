// What tracing costs a prepaid call: the bench stack's app server (tracing off) beside one exporting every span to
// an OTLP/HTTP collector in this process (which takes them and keeps a count).
import type { RunningStack } from "../../cli/dev-stack/start-stack";
import { startOtlpReceiver } from "../../e2e/support/otlp-receiver";
import { prepaidPair } from "./prepaid-pair";
import { ms } from "./stats";

export async function tracingSection(stack: RunningStack, calls: number): Promise<string[]> {
  const collector = await startOtlpReceiver();
  try {
    const { stock: off, changed: on } = await prepaidPair(stack, calls, {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_BSP_SCHEDULE_DELAY: "500",
    });
    const ratio = on.cpu / off.cpu;
    return [
      `prepaid chat completion, ${calls} each in turn: tracing off p50 ${ms(off.p50)}, CPU ${ms(off.cpu)} per call; tracing on p50 ${ms(on.p50)}, CPU ${ms(on.cpu)} per call (${collector.spans.length} spans received)`,
      `tracing on costs ${ms(on.cpu - off.cpu)} of CPU per call, ${((ratio - 1) * 100).toFixed(1)}% more (target <= 10%)`,
    ];
  } finally {
    await collector.stop();
  }
}

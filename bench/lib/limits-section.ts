// What the rate limits cost a prepaid call: the same short chat completion, billed to a prepaid key, at two app
// servers over one SQLite file, one with the limits off (the bench stack's own) and one with every key limit on
// (far above what the run reaches), in turn; latency at p50 and app CPU per call of each.
import type { RunningStack } from "../../cli/dev-stack/start-stack";
import { buyBenchKey } from "./buy-bench-key";
import { startFreshApp } from "./fresh-app";
import { cpuMs } from "./process-cpu";
import { pidListeningOn } from "./process-memory";
import { ms, percentile, rotate, runConcurrently } from "./stats";

/** Key limits on, none of them reached in the run: each call pays the check, never a refusal. */
const LIMITS_ON = {
  RATE_LIMIT_KEY_RPM: "10000000",
  RATE_LIMIT_KEY_TPM: "1000000000",
  RATE_LIMIT_KEY_CONCURRENT: "1000",
};

export async function limitsSection(stack: RunningStack, calls: number): Promise<string[]> {
  const limited = await startFreshApp(stack.appUrl, LIMITS_ON);
  try {
    const pids = [stack.appUrl, limited.url].map((url) => pidListeningOn(Number(new URL(url).port)));
    if (pids.includes(undefined)) throw new Error("app server process not found");
    const [offKey, onKey] = [await buyBenchKey(stack.appUrl), await buyBenchKey(limited.url)];
    const body = JSON.stringify({
      model: "vendor-a/gpt-6-luna",
      messages: [{ role: "user", content: "benchmark" }],
      max_tokens: 16,
    });
    const cpu = [0, 0];
    const call = (url: string, key: string, index: number) => async () => {
      const before = cpuMs(pids[index]!);
      const response = await fetch(`${url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        body,
      });
      const text = await response.text();
      if (response.status !== 200) throw new Error(`${url} answered ${response.status}: ${text.slice(0, 200)}`);
      cpu[index]! += cpuMs(pids[index]!) - before;
    };
    const off = call(stack.appUrl, offKey, 0);
    const on = call(limited.url, onKey, 1);
    // Warm-up of both, so that neither is measured while its code is still being optimised.
    for (const path of [off, on]) await runConcurrently(Math.min(calls, 2000), 1, path);
    cpu.fill(0);
    const [offTimes, onTimes] = await rotate(calls, [off, on]);
    const p50 = (times: number[]) => percentile(times, 50);
    return [
      `prepaid chat completion, ${calls} each in turn: limits off p50 ${ms(p50(offTimes!))}, CPU ${ms(cpu[0]! / calls)} per call; key limits on (requests, tokens, concurrent) p50 ${ms(p50(onTimes!))}, CPU ${ms(cpu[1]! / calls)} per call`,
      `the limits cost ${ms(p50(onTimes!) - p50(offTimes!))} at p50 (target <= 0.2 ms on SQLite) and ${ms((cpu[1]! - cpu[0]!) / calls)} of CPU per call; on PostgreSQL they are one statement more per call (paysvc_take_rate_limit) and one after it ends`,
    ];
  } finally {
    await limited.stop();
  }
}

// The same short chat completion, billed to a prepaid key, at two app servers over one SQLite file: the bench
// stack's own and a fresh one with `env` over its settings, in turn; latency at p50 and app CPU per call of each.
import type { RunningStack } from "../../cli/dev-stack/start-stack";
import { buyBenchKey } from "./buy-bench-key";
import { startFreshApp } from "./fresh-app";
import { cpuMs } from "./process-cpu";
import { pidListeningOn } from "./process-memory";
import { percentile, rotate, runConcurrently } from "./stats";

/**
 * One app server's figures: p50 latency and CPU per call, in ms (at a concurrency above one, the process's CPU
 * over the calls, divided by them); `wholeCpu`: the process's CPU per call over each round of the run (and
 * `settleMs` after it), which also counts what it does between calls (a batch of spans sent).
 */
export interface PrepaidFigures {
  p50: number;
  cpu: number;
  wholeCpu: number[];
}

export async function prepaidPair(
  stack: RunningStack,
  calls: number,
  env: Record<string, string>,
  {
    rounds = 1,
    settleMs = 0,
    freshStock = false,
    concurrency = 1,
  }: { rounds?: number; settleMs?: number; freshStock?: boolean; concurrency?: number } = {},
): Promise<{ stock: PrepaidFigures; changed: PrepaidFigures }> {
  // A fresh stock app is started as the changed one is: neither carries what the stack's own did before.
  const stock = freshStock ? await startFreshApp(stack.appUrl) : undefined;
  const changed = await startFreshApp(stack.appUrl, env);
  const stockUrl = stock?.url ?? stack.appUrl;
  try {
    const pids = [stockUrl, changed.url].map((url) => pidListeningOn(Number(new URL(url).port)));
    if (pids.includes(undefined)) throw new Error("app server process not found");
    const keys = [await buyBenchKey(stockUrl), await buyBenchKey(changed.url)];
    const body = JSON.stringify({
      model: "vendor-a/gpt-6-luna",
      messages: [{ role: "user", content: "benchmark" }],
      max_tokens: 16,
    });
    const cpu = [0, 0];
    const call = (url: string, index: number) => async () => {
      const before = cpuMs(pids[index]!);
      const response = await fetch(`${url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${keys[index]}` },
        body,
      });
      const text = await response.text();
      if (response.status !== 200) throw new Error(`${url} answered ${response.status}: ${text.slice(0, 200)}`);
      cpu[index]! += cpuMs(pids[index]!) - before;
    };
    const paths = [call(stockUrl, 0), call(changed.url, 1)];
    // Warm-up of both, so that neither is measured while its code is still being optimised.
    for (const path of paths) await runConcurrently(Math.min(calls, 2000), 1, path);
    cpu.fill(0);
    const times: number[][] = [[], []];
    const whole: number[][] = [[], []];
    const perRound = Math.ceil(calls / rounds);
    for (let round = 0; round < rounds; round++) {
      const before = pids.map((pid) => cpuMs(pid!));
      // At a concurrency above one, each server takes its share of the round in turn, `concurrency` calls at once.
      const roundTimes =
        concurrency === 1
          ? await rotate(perRound, paths)
          : [
              (await runConcurrently(perRound, concurrency, paths[0]!)).durations,
              (await runConcurrently(perRound, concurrency, paths[1]!)).durations,
            ];
      await new Promise((resolve) => setTimeout(resolve, settleMs));
      pids.forEach((pid, index) => {
        times[index]!.push(...roundTimes[index]!);
        whole[index]!.push((cpuMs(pid!) - before[index]!) / perRound);
      });
    }
    const made = perRound * rounds;
    // Calls at once overlap their own measurements: then the process's CPU over the rounds says it.
    const cpuOf = (index: number) =>
      concurrency === 1 ? cpu[index]! / made : whole[index]!.reduce((sum, each) => sum + each, 0) / rounds;
    return {
      stock: { p50: percentile(times[0]!, 50), cpu: cpuOf(0), wholeCpu: whole[0]! },
      changed: { p50: percentile(times[1]!, 50), cpu: cpuOf(1), wholeCpu: whole[1]! },
    };
  } finally {
    await changed.stop();
    await stock?.stop();
  }
}

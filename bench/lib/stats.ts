/** Percentile of samples (nearest rank), in the samples' unit. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** Runs `task` `total` times with at most `concurrency` at once; returns each run's duration in ms and the rate. */
export async function runConcurrently(total: number, concurrency: number, task: (index: number) => Promise<unknown>) {
  const durations: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(concurrency, total) }, async () => {
      while (next < total) {
        const index = next++;
        const begin = performance.now();
        await task(index);
        durations.push(performance.now() - begin);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { durations, perSecond: total / seconds };
}

export const ms = (value: number) => `${value.toFixed(2)} ms`;

/**
 * Runs each task once per round, `total` rounds, the order rotating every round, so that all of them see the same
 * load of a shared machine and none always follows the same other; returns each task's durations in ms.
 */
export async function rotate(total: number, tasks: readonly (() => Promise<unknown>)[]): Promise<number[][]> {
  const durations: number[][] = tasks.map(() => []);
  for (let round = 0; round < total; round++) {
    for (let step = 0; step < tasks.length; step++) {
      const index = (round + step) % tasks.length;
      const begin = performance.now();
      await tasks[index]!();
      durations[index]!.push(performance.now() - begin);
    }
  }
  return durations;
}

/** Percentile of samples (nearest rank), in the samples' unit. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** Runs `task` `total` times with at most `concurrency` at once; returns each run's duration in ms and the rate. */
export async function runConcurrently(total: number, concurrency: number, task: (index: number) => Promise<void>) {
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
 * Runs `first` and `second` one after the other `total` times each, swapping their order every round, so that both
 * see the same load of a shared machine; returns each one's durations in ms.
 */
export async function alternate(total: number, first: () => Promise<void>, second: () => Promise<void>) {
  const durations: [number[], number[]] = [[], []];
  const timed = async (task: () => Promise<void>, into: number[]) => {
    const begin = performance.now();
    await task();
    into.push(performance.now() - begin);
  };
  for (let round = 0; round < total; round++) {
    if (round % 2 === 0) {
      await timed(first, durations[0]);
      await timed(second, durations[1]);
    } else {
      await timed(second, durations[1]);
      await timed(first, durations[0]);
    }
  }
  return { first: durations[0], second: durations[1] };
}

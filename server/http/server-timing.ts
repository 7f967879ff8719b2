/** A Server-Timing header value: `name;dur=1.23, ...` in milliseconds. */
export function serverTiming(timings: Record<string, number>): string {
  return Object.entries(timings)
    .map(([name, duration]) => `${name};dur=${duration.toFixed(2)}`)
    .join(", ");
}

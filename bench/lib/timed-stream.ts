/**
 * One streamed chat completion posted to `url` (`body` asks for a stream), read to its end: when its first byte
 * came, and how much later than the upstream's pacing (`gapMs` between deltas) each delta after the first arrived.
 * Anything but 200 throws: a refused stream would have no deltas, and its figures would be NaN instead of an error.
 */
export async function timedStream(
  url: string,
  headers: Record<string, string>,
  body: string,
  gapMs: number,
): Promise<{ firstByte: number; gaps: number[] }> {
  const begin = performance.now();
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
  if (response.status !== 200) throw new Error(`${url} answered ${response.status}: ${await response.text()}`);
  const reader = response.body!.getReader();
  const arrivals: number[] = [];
  let firstByte = Number.NaN;
  let buffered = "";
  const decoder = new TextDecoder();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const now = performance.now();
    if (Number.isNaN(firstByte)) firstByte = now - begin;
    buffered += decoder.decode(value, { stream: true });
    const events = buffered.split("\n\n");
    buffered = events.pop() ?? "";
    for (const event of events) if (event.includes('"content":"')) arrivals.push(now);
  }
  const gaps = arrivals.slice(1).map((time, index) => time - arrivals[index]! - gapMs);
  return { firstByte, gaps };
}

import autocannon from "autocannon";

/**
 * The requests per second (and the number answered) one route of a server sustains over `connections` keep-alive
 * connections, driven by autocannon: it costs the client 0.05-0.08 ms a request, against 0.4-0.6 ms for fetch, so
 * that on this two-core machine the server is what saturates, not the benchmark. Throws unless every answer had
 * `status`.
 */
export async function sustainedRate(options: {
  url: string;
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  /** Whole seconds: autocannon ends a run on a one-second tick, so a run of N requests would be timed wrong. */
  seconds: number;
  status: number;
  /** Called for each request: headers to send with it, over `headers` (e.g. a different key each time). */
  headersFor?: () => Record<string, string>;
}): Promise<{ perSecond: number; answered: number }> {
  const { headersFor } = options;
  const result = await autocannon({
    url: options.url,
    method: options.method ?? "GET",
    headers: options.headers,
    body: options.body,
    connections: options.connections,
    duration: options.seconds,
    ...(headersFor && {
      requests: [{ setupRequest: (request) => ({ ...request, headers: { ...request.headers, ...headersFor() } }) }],
    }),
  });
  const answered = result.statusCodeStats?.[`${options.status}`]?.count ?? 0;
  if (answered !== result.requests.total || result.errors > 0 || answered === 0) {
    throw new Error(
      `${options.url}: ${answered} of ${result.requests.total} answers had status ${options.status}, ${result.errors} errors (${JSON.stringify(result.statusCodeStats)})`,
    );
  }
  return { perSecond: answered / result.duration, answered };
}

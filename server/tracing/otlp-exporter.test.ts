import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { afterEach, describe, expect, it, vi } from "vitest";
import { OtlpExporter } from "./otlp-exporter";
import { Span, SpanKind } from "./span";
import { newSpanId, newTraceId } from "./trace-ids";

interface Received {
  headers: IncomingHttpHeaders;
  spans: { name: string }[];
  resource: { key: string }[];
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
  vi.restoreAllMocks();
});

/** A collector over HTTP that answers each export with the next of `statuses` (then 200), keeping what it got. */
async function collector(statuses: number[] = [], redirectTo?: string) {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const document = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
        resourceSpans: { resource: { attributes: { key: string }[] }; scopeSpans: { spans: { name: string }[] }[] }[];
      };
      const [resourceSpans] = document.resourceSpans;
      received.push({
        headers: request.headers,
        spans: resourceSpans!.scopeSpans[0]!.spans,
        resource: resourceSpans!.resource.attributes,
      });
      const status = statuses.shift() ?? 200;
      response.writeHead(status, redirectTo ? { location: redirectTo } : {}).end("{}");
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/v1/traces`, received };
}

function exporterTo(url: string, batchDelayMs = 20, headers: Record<string, string> = {}) {
  return new OtlpExporter(
    { url, headers, batchDelayMs },
    { "service.name": "paysvc-test" },
    { name: "paysvc", version: "1" },
  );
}

function endSpans(exporter: OtlpExporter, count: number, name = "span"): void {
  const traceId = newTraceId();
  for (let i = 0; i < count; i++) {
    new Span(`${name} ${i}`, SpanKind.INTERNAL, traceId, newSpanId(), undefined, undefined, exporter, {}).end();
  }
}

const warnings = () => {
  const lines: string[] = [];
  vi.spyOn(process.stdout, "write").mockImplementation((line) => {
    lines.push(String(line));
    return true;
  });
  return lines;
};

describe("the OTLP/HTTP exporter", () => {
  it("sends a batch once its first span has waited the delay, with the resource and the operator's headers", async () => {
    const { url, received } = await collector();
    const exporter = exporterTo(url, 50, { "x-api-key": "backend-key" });
    endSpans(exporter, 3);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(received).toHaveLength(0);
    await expect.poll(() => received.length, { timeout: 2000 }).toBe(1);
    expect(received[0]!.spans.map((span) => span.name)).toEqual(["span 0", "span 1", "span 2"]);
    expect(received[0]!.resource.map(({ key }) => key)).toContain("service.name");
    expect(received[0]!.headers).toMatchObject({ "x-api-key": "backend-key", "content-type": "application/json" });
  });

  it("sends 512 spans at once without waiting, and what is left at shutdown when flushed", async () => {
    const { url, received } = await collector();
    const exporter = exporterTo(url, 60_000);
    endSpans(exporter, 512 + 7);
    await expect.poll(() => received.length, { timeout: 2000 }).toBeGreaterThanOrEqual(1);
    expect(received[0]!.spans).toHaveLength(512);
    await exporter.flush();
    expect(received.flatMap((batch) => batch.spans)).toHaveLength(519);
  });

  it("sends a batch again when the collector asks for later, and drops one it refuses, saying so", async () => {
    const lines = warnings();
    const later = await collector([503]);
    const retried = exporterTo(later.url);
    endSpans(retried, 2, "kept");
    await expect.poll(() => later.received.length, { timeout: 4000 }).toBe(2);
    expect(later.received[1]!.spans).toEqual(later.received[0]!.spans);
    const refusing = await collector([400]);
    const refused = exporterTo(refusing.url);
    endSpans(refused, 2, "refused");
    await expect.poll(() => lines.some((line) => line.includes("trace_export_failed")), { timeout: 2000 }).toBe(true);
    expect(refusing.received).toHaveLength(1);
    expect(lines.find((line) => line.includes("trace_export_failed"))).toContain("status 400");
  });

  it("follows no redirect: the operator's headers go to its collector only", async () => {
    const lines = warnings();
    const elsewhere = await collector();
    const redirecting = await collector([307], elsewhere.url);
    const exporter = exporterTo(redirecting.url, 20, { authorization: "Bearer backend-key" });
    endSpans(exporter, 1);
    await expect.poll(() => lines.some((line) => line.includes("trace_export_failed")), { timeout: 2000 }).toBe(true);
    expect(redirecting.received).toHaveLength(1);
    expect(elsewhere.received).toHaveLength(0);
  });

  it("keeps trying a collector that is not there, then drops the batch and says why", async () => {
    const lines = warnings();
    const { url } = await collector();
    await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
    const exporter = exporterTo(url);
    endSpans(exporter, 1);
    await expect.poll(() => lines.some((line) => line.includes("trace_export_failed")), { timeout: 6000 }).toBe(true);
    expect(lines.find((line) => line.includes("trace_export_failed"))).toContain("retry: unreachable");
  });
});

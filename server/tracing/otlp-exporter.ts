import { Agent as HttpAgent, request as httpRequest } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { logEvent } from "../core/log";
import { exportRequestFrame, spanJson } from "./otlp-json";
import type { Attributes, Span, SpanSink } from "./span";
import { SpanBatch } from "./span-batch";

/** The spans that make a batch leave at once, without waiting for the delay. */
const MAX_BATCH = 512;
/** One export's time allowed (OTLP's default), and the attempts a batch gets when the collector says "later". */
const TIMEOUT_MS = 10_000;
const ATTEMPTS = 3;
const RETRIED = new Set([429, 502, 503, 504]);

export interface ExporterTarget {
  /** The OTLP/HTTP traces URL (…/v1/traces). */
  url: string;
  headers: Record<string, string>;
  /** How long an ended span waits for others to go with it (ms). */
  batchDelayMs: number;
}

/**
 * Sends ended spans to an OTLP/HTTP collector as JSON, in batches: a batch leaves when it holds 512 spans or when
 * its first span has waited `batchDelayMs`. One export is in flight at a time; the spans that end meanwhile fill the
 * next batch, which leaves as soon as it is done. A collector that asks for later (429, 502–504, or no answer) gets
 * the batch again after a second, then two; a batch it refuses, or a third failure, is dropped and logged, as are
 * the spans that find the next batch full (about 1,700) while one is in flight.
 */
export class OtlpExporter implements SpanSink {
  private filling = new SpanBatch();
  private spare = new SpanBatch();
  private readonly head: Buffer;
  private readonly tail: Buffer;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private dropped = 0;
  private readonly agent: HttpAgent;

  constructor(
    private readonly target: ExporterTarget,
    resource: Attributes,
    scope: { name: string; version: string },
  ) {
    const { head, tail } = exportRequestFrame(resource, scope);
    this.head = Buffer.from(head);
    this.tail = Buffer.from(tail);
    const options = { keepAlive: true, maxSockets: 1 };
    this.agent = target.url.startsWith("https:") ? new HttpsAgent(options) : new HttpAgent(options);
  }

  push(span: Span): void {
    if (!this.filling.add(spanJson(span))) this.dropped += 1;
    this.wait();
  }

  /** Sends every span still waiting (at shutdown), giving up on what is left after `withinMs`. */
  async flush(withinMs = 5_000): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const sent = (async () => {
      while (this.running || this.filling.count > 0) await (this.running ?? this.run());
    })();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([sent, new Promise((resolve) => (timer = setTimeout(resolve, withinMs).unref()))]);
    clearTimeout(timer);
  }

  /** Sends batches until none is waiting; then a span pushed later starts a new wait. */
  private run(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.running ??= (async () => {
      while (this.filling.count > 0) {
        const batch = this.filling;
        [this.filling, this.spare] = [this.spare, batch];
        await this.send(batch);
        batch.clear();
      }
    })().finally(() => {
      this.running = undefined;
      // A span pushed after the last batch left, before this export was over, starts its own wait.
      this.wait();
    });
    return this.running;
  }

  /** While no export is in flight: a full batch leaves now, another waits for the delay (once). */
  private wait(): void {
    if (this.running || this.filling.count === 0) return;
    if (this.filling.count >= MAX_BATCH) void this.run();
    else this.timer ??= setTimeout(() => void this.run(), this.target.batchDelayMs).unref();
  }

  private async send(batch: SpanBatch): Promise<void> {
    let outcome = "";
    for (let attempt = 1; attempt <= ATTEMPTS; attempt += 1) {
      outcome = await this.post(batch.contents());
      if (outcome === "ok" || !outcome.startsWith("retry")) break;
      if (attempt < ATTEMPTS) await new Promise((resolve) => setTimeout(resolve, 1000 * attempt));
    }
    const dropped = this.dropped;
    this.dropped = 0;
    if (outcome !== "ok") logEvent("warn", "trace_export_failed", { spans: batch.count, reason: outcome });
    if (dropped > 0) logEvent("warn", "trace_spans_dropped", { spans: dropped, reason: "batch full" });
  }

  /** One POST of the spans `json` holds: "ok", "retry: …" when the collector may take them later, or why not. */
  private post(json: Buffer): Promise<string> {
    const { url, headers } = this.target;
    const length = this.head.length + json.length + this.tail.length;
    return new Promise((resolve) => {
      // Node's client, not fetch: it follows no redirect (the headers may carry a backend's key: they go to this URL
      // only, and a redirect is a refusal).
      const sent = (url.startsWith("https:") ? httpsRequest : httpRequest)(url, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json", "content-length": length },
        agent: this.agent,
        timeout: TIMEOUT_MS,
      });
      sent.once("response", (response) => {
        response.resume();
        response.once("end", () => {
          const status = response.statusCode ?? 0;
          if (status >= 200 && status < 300) resolve("ok");
          else resolve(`${RETRIED.has(status) ? "retry: " : ""}status ${status}`);
        });
        response.once("error", () => resolve("retry: answer cut short"));
      });
      sent.once("timeout", () => sent.destroy(new Error("timed out")));
      sent.once("error", (error) => resolve(`retry: ${error.message === "timed out" ? "timed out" : "unreachable"}`));
      sent.write(this.head);
      sent.write(json);
      sent.end(this.tail);
    });
  }
}

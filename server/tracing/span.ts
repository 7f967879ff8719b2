/** OTLP's span kinds, as numbers on the wire. */
export const SpanKind = { INTERNAL: 1, SERVER: 2, CLIENT: 3 } as const;
export type SpanKind = (typeof SpanKind)[keyof typeof SpanKind];

export type AttributeValue = string | number | boolean;
export type Attributes = Record<string, AttributeValue>;

/** What a span continues: its trace, the span it is a child of, whether that one is recorded. */
export interface SpanParent {
  readonly traceId: string;
  readonly spanId: string;
  readonly sampled: boolean;
  readonly traceState: string | undefined;
}

/** Where a recorded span goes once it ends: the exporter's batch. */
export interface SpanSink {
  push(span: Span): void;
}

/**
 * One span: a name, its place in a trace, its attributes and its times (ms on `performance.now()`'s clock). A span
 * that is not sampled has no sink: it still names its trace to the calls it makes (`traceparent`), records nothing
 * and is never exported.
 */
export class Span implements SpanParent {
  readonly startedAt = performance.now();
  /** Its parent is a caller's span (a `traceparent` received), not one of this process. */
  readonly remoteParent: boolean;
  endedAt: number | undefined;
  /** Its status is an error (OTLP's STATUS_CODE_ERROR). */
  failed = false;

  constructor(
    readonly name: string,
    readonly kind: SpanKind,
    readonly traceId: string,
    readonly spanId: string,
    readonly parentSpanId: string | undefined,
    readonly traceState: string | undefined,
    private readonly sink: SpanSink | undefined,
    /** Kept, and added to: callers give a fresh object. */
    readonly attributes: Attributes,
    parent?: SpanParent,
  ) {
    this.remoteParent = parent !== undefined && !(parent instanceof Span);
  }

  get sampled(): boolean {
    return this.sink !== undefined;
  }

  /** W3C's `traceparent` naming this span, for the calls made inside it. */
  get traceparent(): string {
    return `00-${this.traceId}-${this.spanId}-${this.sink ? "01" : "00"}`;
  }

  setAttribute(key: string, value: AttributeValue | undefined): void {
    if (this.sink && this.endedAt === undefined && value !== undefined) this.attributes[key] = value;
  }

  /** Sets each attribute given a value (one given `undefined` is left out). */
  setAttributes(attributes: Record<string, AttributeValue | undefined>): void {
    for (const key in attributes) this.setAttribute(key, attributes[key]);
  }

  /** Marks it failed by `error`: an error status and `error.type` (the error's code or class), never its message. */
  fail(error: unknown): void {
    const code = (error as { code?: unknown } | null)?.code;
    const type = typeof code === "string" ? code : ((error as Error | null)?.constructor?.name ?? "Error");
    this.setAttribute("error.type", type);
    this.failed = true;
  }

  /** Ends it (at `at`, else now) and hands it to the exporter; a span ends once. */
  end(at = performance.now()): void {
    if (this.endedAt !== undefined) return;
    this.endedAt = at;
    this.sink?.push(this);
  }
}

/** What one batch holds at most: some 1,700 spans of a paid call's size (about 600 bytes each). */
const BATCH_BYTES = 1 << 20;

/**
 * Ended spans, each written as OTLP/JSON when it ends, one after the other (comma-separated) in memory outside
 * V8's heap. A span waiting for its batch is then no object the garbage collector keeps moving and marking: what
 * tracing costs a busy process would otherwise be mostly that.
 */
export class SpanBatch {
  private readonly bytes = Buffer.allocUnsafeSlow(BATCH_BYTES);
  private used = 0;
  /** The spans in it. */
  count = 0;

  /** Adds one span's JSON; false when it does not fit (the batch is full). */
  add(json: string): boolean {
    const room = BATCH_BYTES - this.used - 1;
    // UTF-8 takes at most 3 bytes per UTF-16 unit: the exact length is counted only near the end.
    if (json.length * 3 > room && Buffer.byteLength(json) > room) return false;
    if (this.count > 0) this.bytes[this.used++] = 0x2c;
    this.used += this.bytes.write(json, this.used);
    this.count += 1;
    return true;
  }

  /** What it holds (a view: valid until it is cleared). */
  contents(): Buffer {
    return this.bytes.subarray(0, this.used);
  }

  clear(): void {
    this.used = 0;
    this.count = 0;
  }
}

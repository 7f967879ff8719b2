import { describe, expect, it } from "vitest";
import { SpanBatch } from "./span-batch";

describe("a batch of spans written as JSON", () => {
  it("holds them one after the other, comma-separated, until it is cleared", () => {
    const batch = new SpanBatch();
    expect(batch.add('{"a":1}')).toBe(true);
    expect(batch.add('{"b":"é🦊"}')).toBe(true);
    expect(batch.count).toBe(2);
    expect(JSON.parse(`[${batch.contents().toString("utf8")}]`)).toEqual([{ a: 1 }, { b: "é🦊" }]);
    batch.clear();
    expect(batch.count).toBe(0);
    expect(batch.contents().length).toBe(0);
  });

  it("refuses a span that does not fit whole, and keeps what it holds intact", () => {
    const batch = new SpanBatch();
    const span = JSON.stringify({ text: "x".repeat(100_000) });
    let added = 0;
    while (batch.add(span)) added += 1;
    expect(added).toBe(10);
    // Near the end the exact length counts: 40 KB of four-byte characters fit in the 48 KB left, as a guess of three
    // bytes per UTF-16 unit (60 KB) would not say; a second one does not.
    const wide = JSON.stringify({ text: "🦊".repeat(10_000) });
    expect(batch.add(wide)).toBe(true);
    expect(batch.add(wide)).toBe(false);
    const parsed = JSON.parse(`[${batch.contents().toString("utf8")}]`) as { text: string }[];
    expect(parsed).toHaveLength(11);
    expect(parsed.at(-1)!.text).toBe("🦊".repeat(10_000));
    expect(batch.contents().length).toBeLessThanOrEqual(1 << 20);
  });
});

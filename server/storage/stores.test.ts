import { describe, expect, it } from "vitest";
import { freeChat } from "../../config/free-tier";
import { freeChatWindows, freeEmbeddingsWindows } from "../windows/free-windows";
import type { NewPayment } from "../payment/payment-ledger";
import { QuoteHold } from "../payment/quote-hold";
import { engines, useTestDatabases, useTwoInstances } from "../../cli/dev-stack/test-databases";

const databases = useTestDatabases();

const payment = (nonce: string): NewPayment => ({
  nonce,
  payer: "0xpayer",
  amount: 123_456_789_012_345_678_901_234_567_890n,
  scheme: "exact",
  method: "x402",
  network: "eip155:137",
  resource: "http://service.test/v1/chat/completions",
  endpoint: "/v1/chat/completions",
  model: "vendor-a/gpt-6-luna",
  bodyHash: "ab".repeat(32),
  paymentSignature: `signature of ${nonce}`,
  quoteMs: 1.4,
});

describe.each(engines)("the stores on %s", (engine) => {
  /** Two storages over one new database, as two instances have. */
  const twoInstances = useTwoInstances(databases, engine);

  it("migrates once when two processes start at once, and names its engine", async () => {
    const [first, second] = await twoInstances();
    expect(first.engine).toBe(engine);
    await first.ping();
    await second.ping();
    expect(await first.ledger.claim(payment("0xmigrated"))).toBeTypeOf("number");
  });

  it("claims a nonce once across instances, keeps the amount exact, and updates only the fields given", async () => {
    const [first, second] = await twoInstances();
    const claims = await Promise.all(
      Array.from({ length: 10 }, (_, index) => [first, second][index % 2]!.ledger.claim(payment("0xnonce"))),
    );
    const ids = claims.filter((id) => id !== undefined);
    expect(ids).toHaveLength(1);
    const id = ids[0]!;
    await second.ledger.update(id, { status: "verified", verifyMs: 2.6, facilitator: "cdp" });
    expect((await first.ledger.findByNonce("0xnonce"))!.facilitator).toBe("cdp");
    // The facilitator that settled replaces the one that verified; an update that names none keeps it.
    await first.ledger.update(id, { status: "settled", transaction: "0xtx", facilitator: "built-in" });
    await first.ledger.update(id, { status: "settled", settleMs: 5 });
    expect(await second.ledger.findByNonce("0xNONCE")).toMatchObject({
      id,
      status: "settled",
      transaction: "0xtx",
      facilitator: "built-in",
      failureReason: null,
      amount: 123_456_789_012_345_678_901_234_567_890n,
      scheme: "exact",
      settledAmount: null,
    });
    expect(await first.ledger.findByNonce("0xother")).toBeUndefined();
  });

  it("keeps an upto payment's signed maximum and the smaller amount it settled, exactly", async () => {
    const [first, second] = await twoInstances();
    const maximum = 2n ** 80n + 3n;
    const id = await first.ledger.claim({ ...payment("permit2:0xpayer:42"), amount: maximum, scheme: "upto" });
    await second.ledger.update(id!, { status: "verified" });
    expect(await first.ledger.findByNonce("permit2:0xpayer:42")).toMatchObject({ scheme: "upto", settledAmount: null });
    await second.ledger.update(id!, { status: "settled", transaction: "0xtx", settledAmount: 2n ** 70n + 9n });
    // A later update that does not name it keeps it.
    await first.ledger.update(id!, { status: "settled", settleMs: 3 });
    expect(await first.ledger.findByNonce("permit2:0xpayer:42")).toMatchObject({
      scheme: "upto",
      amount: maximum,
      settledAmount: 2n ** 70n + 9n,
      status: "settled",
    });
  });

  it("holds a payment-identifier for one payment at a time, keeps its answer, and frees it when let go or expired", async () => {
    const [first, second] = await twoInstances();
    const now = Date.now();
    const held = { payer: "0xpayer", paymentId: "retry-id-0001", nonce: "0xfirst", request: "r\nbody" };
    const holds = await Promise.all(
      Array.from({ length: 6 }, (_, index) =>
        [first, second][index % 2]!.paidAnswers.hold({ ...held, nonce: `0xn${index}` }, now, now + 60_000),
      ),
    );
    expect(holds.filter((hold) => hold.kind === "held")).toHaveLength(1);
    expect(holds.filter((hold) => hold.kind === "busy")).toHaveLength(5);
    const holder = `0xn${holds.findIndex((hold) => hold.kind === "held")}`;
    // Only its holder lets go of it, or keeps an answer in it.
    await second.paidAnswers.release({ ...held, nonce: "0xother" });
    await second.paidAnswers.keep(
      { ...held, nonce: "0xother", status: 200, headers: {}, body: "theirs" },
      now,
      now + 1,
    );
    expect(await first.paidAnswers.hold(held, now, now + 60_000)).toEqual({ kind: "busy", request: held.request });
    const answer = { ...held, nonce: holder, status: 201, headers: { "content-type": "application/json" }, body: "{}" };
    await second.paidAnswers.keep(answer, now, now + 60_000);
    expect(await first.paidAnswers.hold(held, now, now + 60_000)).toEqual({ kind: "kept", answer });
    // A held id let go of is free again; one whose holder died is free once it expires.
    const other = { ...held, paymentId: "retry-id-0002" };
    expect(await first.paidAnswers.hold(other, now, now + 60_000)).toEqual({ kind: "held" });
    await second.paidAnswers.release(other);
    expect(await second.paidAnswers.hold({ ...other, nonce: "0xlater" }, now, now + 60_000)).toEqual({ kind: "held" });
    expect(await first.paidAnswers.hold(other, now + 59_000, now + 120_000)).toEqual({
      kind: "busy",
      request: held.request,
    });
    expect(await first.paidAnswers.hold(other, now + 60_000, now + 120_000)).toEqual({ kind: "held" });
  });

  it("records what an unpaid stream delivered, and finds a payer's unpaid rows since a time, on any instance", async () => {
    const [first, second] = await twoInstances();
    const id = await first.ledger.claim({ ...payment("0xunpaid"), payer: "0xlate" });
    await first.ledger.claim({ ...payment("0xpaid"), payer: "0xprompt" });
    const before = new Date(Date.now() - 1000);
    expect(await second.ledger.unpaidSince("0xlate", before)).toBe(false);
    await second.ledger.update(id!, { status: "unpaid", failureReason: "insufficient_funds", unpaidAmount: 2n ** 66n });
    expect(await first.ledger.findByNonce("0xunpaid")).toMatchObject({
      status: "unpaid",
      unpaidAmount: 2n ** 66n,
      settledAmount: null,
    });
    expect(await first.ledger.unpaidSince("0xlate", before)).toBe(true);
    expect(await first.ledger.unpaidSince("0xprompt", before)).toBe(false);
    expect(await second.ledger.unpaidSince("0xlate", new Date(Date.now() + 60_000))).toBe(false);
    const report = await first.ledger.report(before, "day");
    expect(report.find((row) => row.status === "unpaid")).toMatchObject({ count: 1, amount: 2n ** 66n });
    // The unpaid payers, the most first, summed exactly past 2^64.
    const again = await second.ledger.claim({ ...payment("0xunpaid2"), payer: "0xlate" });
    await first.ledger.update(again!, { status: "unpaid", unpaidAmount: 5n });
    const small = await second.ledger.claim({ ...payment("0xunpaid3"), payer: "0xsmall" });
    await first.ledger.update(small!, { status: "unpaid", unpaidAmount: 7n });
    expect(await second.ledger.unpaidPayers(before)).toEqual([
      { payer: "0xlate", count: 2, amount: 2n ** 66n + 5n },
      { payer: "0xsmall", count: 1, amount: 7n },
    ]);
    expect(await second.ledger.unpaidPayers(new Date(Date.now() + 60_000))).toEqual([]);
  });

  it("moves a row only from the status a reconciler read, once across instances, and lists rows by status", async () => {
    const [first, second] = await twoInstances();
    const ids: number[] = [];
    for (const nonce of ["0xl1", "0xl2", "0xl3", "0xl4"]) ids.push((await first.ledger.claim(payment(nonce)))!);
    await first.ledger.update(ids[1]!, { status: "settle_unknown", failureReason: "timeout" });
    await first.ledger.update(ids[3]!, { status: "settle_unknown" });
    const moves = await Promise.all(
      Array.from({ length: 6 }, (_, index) =>
        [first, second][index % 2]!.ledger.updateIf(ids[1]!, "settle_unknown", {
          status: "settled",
          transaction: `0xtx${index}`,
        }),
      ),
    );
    expect(moves.filter(Boolean)).toHaveLength(1);
    const moved = await second.ledger.findByNonce("0xl2");
    expect(moved).toMatchObject({ status: "settled", failureReason: "timeout", paymentSignature: "signature of 0xl2" });
    expect(moved!.transaction).toBe(`0xtx${moves.indexOf(true)}`);
    expect(await second.ledger.updateIf(ids[0]!, "verified", { status: "unsettled" })).toBe(false);
    expect((await first.ledger.findByNonce("0xl1"))!.status).toBe("pending");

    const listed = await second.ledger.listByStatus(["pending", "settle_unknown"], 0, 2);
    expect(listed.map((row) => row.id)).toEqual([ids[0], ids[2]]);
    const next = await second.ledger.listByStatus(["pending", "settle_unknown"], ids[2]!, 2);
    expect(next.map((row) => [row.id, row.status])).toEqual([[ids[3], "settle_unknown"]]);
    expect(next[0]).toMatchObject({
      amount: 123_456_789_012_345_678_901_234_567_890n,
      endpoint: "/v1/chat/completions",
    });
    // The newest first, as many as asked, none made before `since`.
    const newest = await first.ledger.newestByStatus(["pending", "settle_unknown"], new Date(0), 2);
    expect(newest.map((row) => [row.id, row.status])).toEqual([
      [ids[3], "settle_unknown"],
      [ids[2], "pending"],
    ]);
    expect(await second.ledger.newestByStatus(["pending"], new Date(Date.now() + 60_000), 10)).toEqual([]);
  });

  it("reports payments by period, endpoint, model, status and protocol, summing amounts past 2^64 exactly", async () => {
    const [first, second] = await twoInstances();
    const before = new Date();
    const big = 2n ** 70n + 1n;
    const rows: [string, string | undefined, bigint, "settled" | "failed" | undefined][] = [
      ["0xr1", undefined, big, "settled"],
      ["0xr2", undefined, big, "settled"],
      ["0xr3", undefined, 5n, "failed"],
      ["0xr4", "vendor-a/gpt-5.6-sol", 7n, "settled"],
      ["0xr5", "vendor-a/gpt-5.6-sol", 11n, undefined],
      ["0xr6", "vendor-a/gpt-5.6-sol", 1000n, "settled"],
    ];
    for (const [index, [nonce, model, amount, status]] of rows.entries()) {
      const ledger = [first, second][index % 2]!.ledger;
      const upto = nonce === "0xr6";
      const id = await ledger.claim({
        ...payment(nonce),
        amount,
        ...(model ? { model } : {}),
        ...(upto && { scheme: "upto" as const }),
        // One payment came by MPP: the report groups by protocol too.
        ...(nonce === "0xr4" && { method: "mpp" as const }),
      });
      // The upto row signed for at most 1000 and settled 13: the report sums what was settled.
      if (status) await ledger.update(id!, { status, ...(upto && { settledAmount: 13n }) });
    }
    const after = new Date();
    const report = await second.ledger.report(new Date(before.getTime() - 1000), "day");
    const day = report[0]?.period;
    expect([before, after].map((at) => at.toISOString().slice(0, 10))).toContain(day);
    const line = (model: string, status: string, count: number, amount: bigint, method = "x402") => ({
      period: day,
      endpoint: "/v1/chat/completions",
      model,
      status,
      method,
      count,
      amount,
    });
    expect(report).toEqual([
      line("vendor-a/gpt-5.6-sol", "pending", 1, 11n),
      line("vendor-a/gpt-5.6-sol", "settled", 1, 7n, "mpp"),
      line("vendor-a/gpt-5.6-sol", "settled", 1, 13n),
      line("vendor-a/gpt-6-luna", "failed", 1, 5n),
      line("vendor-a/gpt-6-luna", "settled", 2, 2n * big),
    ]);
    const hourly = await first.ledger.report(new Date(before.getTime() - 1000), "hour");
    expect(hourly.map((row) => row.period)[0]).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:00Z$/);
    expect(hourly.reduce((sum, row) => sum + row.count, 0)).toBe(6);
    expect(await first.ledger.report(new Date(after.getTime() + 60_000), "day")).toEqual([]);
  });

  it("counts one caller's free chat requests across instances: exactly the window's limit of 30 at once", async () => {
    const [first, second] = await twoInstances();
    const windows = [freeChatWindows(first.windowLog), freeChatWindows(second.windowLog)];
    const now = Date.now();
    const admitted = await Promise.allSettled(
      Array.from({ length: 30 }, (_, index) => windows[index % 2]!.admit("198.51.100.7", now)),
    );
    const shortWindow = freeChat.windows[0]!;
    const limit = shortWindow.limit;
    const taken = admitted.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
    expect(taken).toHaveLength(limit);
    for (const result of admitted.filter((result) => result.status === "rejected")) {
      expect(result.reason).toMatchObject({ status: 429, code: "free_tier_exhausted" });
      expect(Number(result.reason.options.headers["Retry-After"])).toBeGreaterThan(0);
    }
    const [short, day] = await windows[1]!.usage("198.51.100.7", now);
    expect(short).toMatchObject({ used: limit, limit, resetSeconds: shortWindow.durationMs / 1000 });
    expect(day).toMatchObject({ used: limit });
    // Another caller has windows of its own; a request given back frees its slot.
    expect(await windows[0]!.admit("198.51.100.8", now)).toBeDefined();
    await taken[0]!.giveBack();
    expect((await windows[0]!.usage("198.51.100.7", now))[0]!.used).toBe(limit - 1);
    // Requests leave the short window after its length.
    const later = now + shortWindow.durationMs + 1;
    expect((await windows[1]!.usage("198.51.100.7", later))[0]).toMatchObject({ used: 0, resetSeconds: 0 });
    expect(await windows[1]!.admit("198.51.100.7", later)).toBeDefined();
  });

  it("keeps each scope's windows apart and counts an IPv6 caller by its /64, across instances", async () => {
    const [first, second] = await twoInstances();
    const settings = { windows: [{ name: "per10Min", limit: 3, durationMs: 600_000 }], maxInputTokens: 100 };
    const embeddings = [
      freeEmbeddingsWindows(first.windowLog, settings),
      freeEmbeddingsWindows(second.windowLog, settings),
    ];
    const now = Date.now();
    // Eight addresses of one /64, at once on two instances: three are served.
    const admitted = await Promise.allSettled(
      Array.from({ length: 8 }, (_, index) => embeddings[index % 2]!.admit(`2001:db8:0:1::${index + 1}`, now)),
    );
    expect(admitted.filter((result) => result.status === "fulfilled")).toHaveLength(3);
    await expect(embeddings[1]!.admit("2001:db8:0:1:ffff::1", now)).rejects.toMatchObject({
      status: 429,
      options: { headers: { "Retry-After": "600", "RateLimit-Remaining": "0" } },
    });
    // The next /64 is another caller, and the free chat's windows of the same caller are untouched.
    expect(await embeddings[0]!.admit("2001:db8:0:2::1", now)).toBeDefined();
    expect((await freeChatWindows(second.windowLog).usage("2001:db8:0:1::1", now))[0]!.used).toBe(0);
    expect((await embeddings[1]!.usage("2001:db8:0:1::77", now))[0]).toMatchObject({ used: 3, limit: 3 });
    // A scope with every window off limits nothing and writes nothing.
    const off = freeEmbeddingsWindows(first.windowLog, { windows: [], maxInputTokens: 100 });
    expect(await off.admit("2001:db8:0:1::1", now)).toMatchObject({ headers: {} });
  });

  it("holds one quote across instances: concurrent first quotes agree, and an expired hold is replaced", async () => {
    const [first, second] = await twoInstances();
    const codec = { encode: (value: bigint) => value.toString(), decode: (text: string) => BigInt(text) };
    const holds = [new QuoteHold(first.quoteHolds, codec), new QuoteHold(second.quoteHolds, codec)];
    let made = 0n;
    const make = async () => {
      made += 1n;
      return 1000n + made;
    };
    const quotes = await Promise.all(
      Array.from({ length: 6 }, (_, index) => holds[index % 2]!.get("resource\nbody", 60_000, make)),
    );
    expect(new Set(quotes).size).toBe(1);
    expect(await holds[1]!.get("resource\nbody", 60_000, make)).toBe(quotes[0]);
    expect(await holds[0]!.get("resource\nother body", 60_000, make)).not.toBe(quotes[0]);
    const expiring = await holds[0]!.get("short-lived", 1, make);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await holds[1]!.get("short-lived", 1, make)).not.toBe(expiring);
  });
  it("holds a payer's maxima within what it can pay across instances, one sponsored permit at a time", async () => {
    const [first, second] = await twoInstances();
    const now = Date.now();
    const hold = (key: string, amount: bigint, extra: { sponsored?: boolean; expiresAt?: number } = {}) => ({
      key,
      payer: "0xpayer",
      amount,
      capacity: 29_037n * 3n,
      sponsored: extra.sponsored ?? false,
      expiresAt: extra.expiresAt ?? now + 60_000,
    });
    // Eight concurrent holds of one maximum on two instances, against funds for three: exactly three are taken.
    const taken = await Promise.all(
      Array.from({ length: 8 }, (_, index) =>
        [first, second][index % 2]!.payerHolds.hold(hold(`h${index}`, 29_037n), now),
      ),
    );
    expect(taken.filter(Boolean)).toHaveLength(3);
    expect(await second.payerHolds.heldBy("0xpayer", now)).toEqual({
      amount: 87_111n,
      sponsored: false,
      ended: 0n,
      endedAmount: 0n,
    });
    // Another payer's funds are its own; a released hold frees its room for the next payment.
    expect(await first.payerHolds.hold({ ...hold("other", 29_037n), payer: "0xother" }, now)).toBe(true);
    await first.payerHolds.release(`h${taken.indexOf(true)}`);
    // Funds read before a hold ended may still hold what its payment took: it counts as held, unless they were read
    // after (or cover it too).
    const readBefore = { ...hold("next", 29_037n), endedAmountBefore: 0n };
    expect(await second.payerHolds.hold(readBefore, now)).toBe(false);
    expect(await second.payerHolds.hold({ ...readBefore, capacity: 29_037n * 4n }, now)).toBe(true);
    await second.payerHolds.release("next");
    expect(await second.payerHolds.hold({ ...readBefore, endedAmountBefore: 29_037n * 2n }, now)).toBe(true);
    expect(await second.payerHolds.hold(hold("too much", 1n), now)).toBe(false);
    // An expired hold (its process died) counts no more.
    const later = now + 120_000;
    expect(await first.payerHolds.heldBy("0xpayer", later)).toEqual({
      amount: 0n,
      sponsored: false,
      ended: 2n,
      endedAmount: 58_074n,
    });
    expect(
      await first.payerHolds.hold(hold("sponsored", 29_037n, { sponsored: true, expiresAt: later + 60_000 }), later),
    ).toBe(true);
    // One payment resting on a permit at a time, whatever the room left.
    const again = hold("sponsored again", 1n, { sponsored: true, expiresAt: later + 60_000 });
    expect(await second.payerHolds.hold(again, later)).toBe(false);
    expect(await second.payerHolds.heldBy("0xpayer", later)).toEqual({
      amount: 29_037n,
      sponsored: true,
      ended: 2n,
      endedAmount: 58_074n,
    });
    await second.payerHolds.release("sponsored");
    await second.payerHolds.release("no such hold");
    expect(await first.payerHolds.heldBy("0xpayer", later)).toMatchObject({ ended: 3n, endedAmount: 87_111n });
    expect(await first.payerHolds.heldBy("0xother", later)).toMatchObject({ ended: 0n, endedAmount: 0n });
    expect(await second.payerHolds.hold(again, later)).toBe(true);
  });
  it("takes a payer's hold without a capacity only when it holds nothing else, and counts it in the next", async () => {
    const [first, second] = await twoInstances();
    const now = Date.now();
    const hold = (key: string, amount: bigint, capacity?: bigint) => ({
      key,
      payer: "0xsettler",
      amount,
      capacity,
      sponsored: false,
      expiresAt: now + 60_000,
    });
    // Concurrent settled-first holds on two instances: one is taken, the others find it there.
    const taken = await Promise.all(
      Array.from({ length: 4 }, (_, index) =>
        [first, second][index % 2]!.payerHolds.hold(hold(`s${index}`, 1_000n), now),
      ),
    );
    expect(taken.filter(Boolean)).toHaveLength(1);
    // Beside it, a hold fits only in what the payer can pay less its amount.
    expect(await second.payerHolds.hold(hold("credit", 1_001n, 2_000n), now)).toBe(false);
    expect(await second.payerHolds.hold(hold("credit", 1_000n, 2_000n), now)).toBe(true);
    await first.payerHolds.release(`s${taken.indexOf(true)}`);
    expect(await first.payerHolds.hold(hold("alone", 1n), now)).toBe(false);
    await first.payerHolds.release("credit");
    expect(await first.payerHolds.hold(hold("alone", 1n), now)).toBe(true);
  });
  it("lowers a hold being taken to what it takes, freeing the rest for the payer's other payments", async () => {
    const [first, second] = await twoInstances();
    const now = Date.now();
    const hold = (key: string, amount: bigint) => ({
      key,
      payer: "0xlowered",
      amount,
      capacity: 2n * 29_037n,
      sponsored: false,
      expiresAt: now + 60_000,
    });
    expect(await first.payerHolds.hold(hold("a", 29_037n), now)).toBe(true);
    expect(await first.payerHolds.hold(hold("b", 29_037n), now)).toBe(true);
    expect(await second.payerHolds.hold(hold("c", 29_037n), now)).toBe(false);
    // "a" is being settled for 1,007: the funds it will take are that much, whether or not it has landed.
    await second.payerHolds.lower("a", 1_007n);
    expect(await first.payerHolds.heldBy("0xlowered", now)).toEqual({
      amount: 30_044n,
      sponsored: false,
      ended: 0n,
      endedAmount: 0n,
    });
    expect(await second.payerHolds.hold(hold("c", 2n * 29_037n - 30_044n), now)).toBe(true);
    // Never raised, and nothing for a hold that is not there.
    await first.payerHolds.lower("a", 29_037n);
    await first.payerHolds.lower("no such hold", 1n);
    expect((await second.payerHolds.heldBy("0xlowered", now)).amount).toBe(2n * 29_037n);
    // Ended, it counts what it held then: what its payment took.
    await first.payerHolds.release("a");
    expect(await second.payerHolds.heldBy("0xlowered", now)).toMatchObject({ ended: 1n, endedAmount: 1_007n });
  });
});

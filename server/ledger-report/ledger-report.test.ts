import { describe, expect, it } from "vitest";
import { getNetwork } from "../../networks";
import type { LedgerReportRow } from "../payment/payment-ledger";
import { byEndpointAndModel, byPeriod, ledgerReport, periodOf } from "./ledger-report";

const network = getNetwork("eip155:137");
const prepaid = { keysSold: 1, tokensSold: 100_000, activeKeys: 1, tokensOutstanding: 99_000 };
const row = (
  period: string,
  endpoint: string | null,
  status: LedgerReportRow["status"],
  count: number,
  amount: bigint,
  method: LedgerReportRow["method"] = "x402",
) => ({ period, endpoint, model: endpoint && "m", status, method, count, amount }) satisfies LedgerReportRow;

describe("the ledger report", () => {
  const rows = [
    row("2026-11-26", "/v1/chat/completions", "settled", 2, 2_000n),
    row("2026-11-26", "/v1/chat/completions", "unpaid", 1, 300n),
    row("2026-11-26", "/prepaid/codes", "settled", 1, 8_000n),
    row("2026-11-27", "/v1/chat/completions", "settled", 1, 1_000n, "mpp"),
    row("2026-11-27", "/v1/chat/completions", "settle_unknown", 1, 1_000n),
    row("2026-11-27", null, "unsettled", 1, 500n),
  ];
  const report = ledgerReport(rows, prepaid, network, new Date("2026-11-26T00:00:00Z"), "day");

  it("sums revenue from settled rows only, and every status with its amount, in exact decimals", () => {
    expect(report.total).toEqual({
      requests: { settled: 4, unpaid: 1, settle_unknown: 1, unsettled: 1 },
      revenueAtomic: 11_000n,
      revenueUsd: "0.011000",
      unpaidAtomic: 300n,
    });
    expect(report.statuses).toEqual({
      settled: { count: 4, amountAtomic: 11_000n, amountUsd: "0.011000" },
      unpaid: { count: 1, amountAtomic: 300n, amountUsd: "0.000300" },
      settle_unknown: { count: 1, amountAtomic: 1_000n, amountUsd: "0.001000" },
      unsettled: { count: 1, amountAtomic: 500n, amountUsd: "0.000500" },
    });
    expect(report.methods).toEqual({
      x402: { count: 6, amountAtomic: 10_000n, amountUsd: "0.010000" },
      mpp: { count: 1, amountAtomic: 1_000n, amountUsd: "0.001000" },
    });
    expect(report.prepaid).toBe(prepaid);
    expect(report.lines.at(-1)).toMatchObject({ endpoint: "(unrecorded)", model: "(unrecorded)" });
  });

  it("adds its lines up per endpoint and model, and per period", () => {
    expect(byEndpointAndModel(report, 6).map((line) => [line.endpoint, line.revenueUsd, line.requests])).toEqual([
      ["(unrecorded)", "0.000000", { unsettled: 1 }],
      ["/prepaid/codes", "0.008000", { settled: 1 }],
      ["/v1/chat/completions", "0.003000", { settled: 3, unpaid: 1, settle_unknown: 1 }],
    ]);
    expect(byPeriod(report, 6).map((line) => [line.period, line.revenueAtomic, line.unpaidAtomic])).toEqual([
      ["2026-11-26", 10_000n, 300n],
      ["2026-11-27", 1_000n, 0n],
    ]);
  });

  it("names periods as the ledger's groups do", () => {
    const at = new Date("2026-11-27T01:42:10Z");
    expect(periodOf(at, "day")).toBe("2026-11-27");
    expect(periodOf(at, "hour")).toBe("2026-11-27T01:00Z");
  });
});

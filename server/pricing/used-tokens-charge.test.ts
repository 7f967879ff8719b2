import { describe, expect, it } from "vitest";
import { defaultCatalog } from "../../config/catalog/default-catalog";
import { polygon } from "../../networks/eip155-137";
import { decimalToAtomic } from "../core/money";
import { quoteTokens } from "./quote-tokens";
import { usedTokensCharge } from "./used-tokens-charge";

describe("usedTokensCharge", () => {
  const model = defaultCatalog().chat.find((chat) => chat.id === "vendor-a/gpt-5.6-sol")!;
  const tokens = { model, input: 12, maxOutput: 4096, decimals: 6 };
  const quoted = quoteTokens({ model, inputTokens: 12, maxOutputTokens: 4096, network: polygon }).amount;

  /** Input at its rate plus output at its rate, per million tokens, rounded up once, plus Polygon's 0.001 USD. */
  const expected = (outputTokens: number) => {
    const scaled =
      12n * decimalToAtomic(model.inputUsdPerMillion, 6) +
      BigInt(outputTokens) * decimalToAtomic(model.outputUsdPerMillion, 6);
    return (scaled + 999_999n) / 1_000_000n + 1000n;
  };

  it("charges the output reported at the output rate, the input and the overhead as quoted, rounded up once", () => {
    const charge = usedTokensCharge({ tokens, quoted, maximum: quoted, outputTokens: 20, network: polygon });
    expect(charge).toBe(expected(20));
    expect(charge).toBeLessThan(quoted);
    expect(usedTokensCharge({ tokens, quoted, maximum: quoted, outputTokens: 4096, network: polygon })).toBe(quoted);
  });

  it("charges the cap when the output is not reported, or reported beyond it", () => {
    for (const outputTokens of [undefined, 5000, -1, 2.5]) {
      expect(usedTokensCharge({ tokens, quoted, maximum: quoted, outputTokens, network: polygon })).toBe(quoted);
    }
  });

  it("keeps live gas held with the quote, and never exceeds what was signed for", () => {
    const gas = 777n;
    const charge = usedTokensCharge({ tokens, quoted, maximum: quoted + gas, outputTokens: 20, network: polygon });
    expect(charge).toBe(expected(20) + gas);
    const all = usedTokensCharge({ tokens, quoted, maximum: quoted + gas, outputTokens: 4096, network: polygon });
    expect(all).toBe(quoted + gas);
  });
});

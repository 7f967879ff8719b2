import { describe, expect, it } from "vitest";
import { atomicToDecimal, decimalToAtomic, divideRoundingUp, perMillionToPerUnit } from "./money";

describe("money", () => {
  it("converts decimal strings to atomic units exactly", () => {
    expect(decimalToAtomic("2.80", 6)).toBe(2_800_000n);
    expect(decimalToAtomic("0.001", 6)).toBe(1000n);
    expect(decimalToAtomic("14", 6)).toBe(14_000_000n);
    expect(decimalToAtomic("0.045000", 6)).toBe(45_000n);
    expect(() => decimalToAtomic("0.0000001", 6)).toThrow(/more than 6 decimals/);
    expect(() => decimalToAtomic("-1", 6)).toThrow(/non-negative/);
    expect(() => decimalToAtomic("1e3", 6)).toThrow();
    // Parsed values are kept per number of decimals; a refused one is refused again.
    expect(decimalToAtomic("2.80", 6)).toBe(2_800_000n);
    expect(decimalToAtomic("2.80", 2)).toBe(280n);
    expect(decimalToAtomic("2.80", 1)).toBe(28n);
    expect(() => decimalToAtomic("2.85", 1)).toThrow(/more than 1 decimals/);
    expect(() => decimalToAtomic("0.0000001", 6)).toThrow(/more than 6 decimals/);
  });

  it("formats atomic units with every decimal place", () => {
    expect(atomicToDecimal(4_733_000n, 6)).toBe("4.733000");
    expect(atomicToDecimal(1000n, 6)).toBe("0.001000");
    expect(atomicToDecimal(0n, 6)).toBe("0.000000");
    expect(atomicToDecimal(5n, 0)).toBe("5");
  });

  it("rounds divisions up", () => {
    expect(divideRoundingUp(10n, 5n)).toBe(2n);
    expect(divideRoundingUp(11n, 5n)).toBe(3n);
    expect(divideRoundingUp(0n, 5n)).toBe(0n);
    expect(() => divideRoundingUp(1n, 0n)).toThrow();
  });

  it("shifts per-million rates to per-unit rates without floating point", () => {
    expect(perMillionToPerUnit("2.80")).toBe("0.0000028");
    expect(perMillionToPerUnit("14.00")).toBe("0.000014");
    expect(perMillionToPerUnit("0.07")).toBe("0.00000007");
    expect(perMillionToPerUnit("0.35")).toBe("0.00000035");
    expect(perMillionToPerUnit("1000000")).toBe("1");
  });
});

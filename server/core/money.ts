/**
 * Money is integer atomic units of the asset (USDC has 6 decimals) held in bigint. Prices written in the
 * tables are exact decimal strings; they are converted once, without floating point.
 */
const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

const parsed = new Map<string, bigint>();
const PARSED_LIMIT = 1_000;

/**
 * "2.80" with 6 decimals -> 2800000n. Refuses values with more precision than the asset has. The values are prices
 * from configuration, parsed on every quote, so each is parsed once (the cache is bounded all the same).
 */
export function decimalToAtomic(value: string, decimals: number): bigint {
  const key = `${decimals}:${value}`;
  let atomic = parsed.get(key);
  if (atomic === undefined) {
    atomic = parseDecimal(value, decimals);
    if (parsed.size >= PARSED_LIMIT) parsed.clear();
    parsed.set(key, atomic);
  }
  return atomic;
}

function parseDecimal(value: string, decimals: number): bigint {
  const match = DECIMAL.exec(value);
  if (!match) throw new Error(`not a non-negative decimal: ${value}`);
  const whole = match[1] ?? "0";
  const fraction = (match[2] ?? "").replace(/0+$/, "");
  if (fraction.length > decimals) throw new Error(`${value} has more than ${decimals} decimals`);
  return BigInt(whole) * 10n ** BigInt(decimals) + BigInt(fraction.padEnd(decimals, "0") || "0");
}

/** 4733000n with 6 decimals -> "4.733000": every decimal place shown, as quotes are written. */
export function atomicToDecimal(amount: bigint, decimals: number): string {
  const negative = amount < 0n;
  const digits = (negative ? -amount : amount).toString().padStart(decimals + 1, "0");
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals);
  return `${negative ? "-" : ""}${whole}${decimals > 0 ? `.${fraction}` : ""}`;
}

/** Divides and rounds up: prices never round in the payer's favour below cost. */
export function divideRoundingUp(numerator: bigint, denominator: bigint): bigint {
  if (denominator <= 0n) throw new Error("denominator must be positive");
  return numerator <= 0n ? 0n : (numerator + denominator - 1n) / denominator;
}

/** "2.80" USD per 1M tokens -> "0.0000028" USD per token, exactly (a decimal shift, no arithmetic). */
export function perMillionToPerUnit(value: string): string {
  const match = DECIMAL.exec(value);
  if (!match) throw new Error(`not a non-negative decimal: ${value}`);
  const digits = `${match[1]}${match[2] ?? ""}`;
  const scale = (match[2] ?? "").length + 6;
  const padded = digits.padStart(scale + 1, "0");
  const whole = padded.slice(0, padded.length - scale).replace(/^0+(?=\d)/, "");
  const fraction = padded.slice(padded.length - scale).replace(/0+$/, "");
  return fraction ? `${whole}.${fraction}` : whole;
}

import type { PaymentRequirements } from "@x402/core/types";

const FIELDS = ["scheme", "network", "amount", "asset", "payTo", "maxTimeoutSeconds"] as const;

/** Names the first requirement the signed payment differs on, so the caller knows what to fix. */
export function describeMismatch(accepted: Partial<PaymentRequirements>, required: PaymentRequirements): string {
  for (const field of FIELDS) {
    const signed = accepted[field];
    const wanted = required[field];
    const same =
      typeof wanted === "string" && typeof signed === "string"
        ? signed.toLowerCase() === wanted.toLowerCase()
        : signed === wanted;
    if (!same) {
      return `Payment does not match this request's requirements: ${field} is ${JSON.stringify(signed)}, required ${JSON.stringify(wanted)}`;
    }
  }
  return "Payment does not match this request's requirements (extra differs); sign the requirements of the latest 402 answer";
}

/**
 * The protocols a payment may come by, the same list for the types, both engines' ledger schemas, the metrics and
 * the documents: x402 (PAYMENT-SIGNATURE, or v1's X-PAYMENT) and MPP (`Authorization: Payment`). A prepaid key is
 * the other way a call is paid for, spending what such a payment bought.
 */
export const paymentProtocols = ["x402", "mpp"] as const;
export type PaymentProtocol = (typeof paymentProtocols)[number];

/** Every way a call is paid for: a payment by one of the protocols, or a prepaid key. */
export const paymentMethodNames = ["prepaid", ...paymentProtocols] as const;
export type PaymentMethodName = (typeof paymentMethodNames)[number];

import type { PaymentPayload } from "@x402/core/types";
import { z } from "zod";

/** Why a PAYMENT-SIGNATURE header could not be read; answered with 402 and the requirements again. */
export class MalformedPaymentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MalformedPaymentError";
  }
}

const hex = (bytes: number) => z.string().regex(new RegExp(`^0x[0-9a-fA-F]{${bytes * 2}}$`));

const evmExactPayload = z.object({
  signature: z.string().regex(/^0x[0-9a-fA-F]+$/, "must be hex"),
  authorization: z.object({
    from: hex(20),
    to: hex(20),
    value: z.string().regex(/^\d+$/),
    validAfter: z.string().regex(/^\d+$/),
    validBefore: z.string().regex(/^\d+$/),
    nonce: hex(32),
  }),
});

const paymentPayloadSchema = z.object({
  x402Version: z.literal(2, { error: "x402Version must be 2" }),
  resource: z.object({ url: z.string() }).loose().optional(),
  accepted: z
    .object({
      scheme: z.string(),
      network: z.string(),
      asset: z.string(),
      amount: z.string(),
      payTo: z.string(),
      maxTimeoutSeconds: z.number(),
      extra: z.record(z.string(), z.unknown()),
    })
    .loose(),
  payload: evmExactPayload.loose(),
  extensions: z.record(z.string(), z.unknown()).optional(),
});

export interface DecodedPayment {
  payload: PaymentPayload;
  /** The EIP-3009 authorization nonce: unique per signed payment, the ledger's key. */
  nonce: string;
  payer: string;
}

/** Decodes base64 JSON of an x402 v2 "exact" EVM payment payload, checking its shape strictly. */
export function decodePaymentSignature(header: string): DecodedPayment {
  const trimmed = header.trim();
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)) throw new MalformedPaymentError("PAYMENT-SIGNATURE is not base64");
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(trimmed, "base64").toString("utf8"));
  } catch {
    throw new MalformedPaymentError("PAYMENT-SIGNATURE is not base64-encoded JSON");
  }
  const result = paymentPayloadSchema.safeParse(json);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new MalformedPaymentError(
      `PAYMENT-SIGNATURE is not an x402 v2 exact payment payload: ${issue?.path.join(".") || "payload"}: ${issue?.message}`,
    );
  }
  const payload = result.data as unknown as PaymentPayload;
  const { authorization } = result.data.payload;
  return { payload, nonce: authorization.nonce.toLowerCase(), payer: authorization.from.toLowerCase() };
}

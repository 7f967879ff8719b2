import { createHash } from "node:crypto";
import { getBase64Encoder, getCompiledTransactionMessageDecoder, getTransactionDecoder } from "@solana/kit";
import type { PaymentPayload } from "@x402/core/types";
import { z } from "zod";

/** Why a PAYMENT-SIGNATURE header could not be read; answered with 402 and the requirements again. */
export class MalformedPaymentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "MalformedPaymentError";
  }
}

export const hex = (bytes: number) => z.string().regex(new RegExp(`^0x[0-9a-fA-F]{${bytes * 2}}$`));

export const evmExactPayload = z.object({
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

const uint256 = z.string().regex(/^\d{1,78}$/, "must be a decimal integer");

/**
 * The EVM "upto" payload: a Permit2 transfer of at most `permitted.amount`, whose witness names the recipient and
 * the facilitator that may settle it (x402's upto proxy is the spender).
 */
export const evmUptoPayload = z.object({
  signature: z.string().regex(/^0x[0-9a-fA-F]+$/, "must be hex"),
  permit2Authorization: z.object({
    from: hex(20),
    permitted: z.object({ token: hex(20), amount: uint256 }),
    spender: hex(20),
    nonce: uint256,
    deadline: uint256,
    witness: z.object({ to: hex(20), facilitator: hex(20), validAfter: uint256 }),
  }),
});

/** The SVM "exact" payload: a transfer transaction signed by the payer, the fee payer's signature left empty. */
const svmExactPayload = z.object({
  transaction: z.string().regex(/^[A-Za-z0-9+/]+={0,2}$/, "must be a base64 transaction"),
});

const paymentPayloadSchema = <T extends z.ZodType>(signedPayload: T) =>
  z.object({
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
    payload: signedPayload,
    extensions: z.record(z.string(), z.unknown()).optional(),
  });
const evmPaymentPayload = paymentPayloadSchema(evmExactPayload.loose());
const evmUptoPaymentPayload = paymentPayloadSchema(evmUptoPayload.loose());
const svmPaymentPayload = paymentPayloadSchema(svmExactPayload.loose());

export interface DecodedPayment {
  /** x402 v2 (PAYMENT-SIGNATURE) or v1 (X-PAYMENT, see x402-v1.ts). */
  version: 1 | 2;
  /** As signed: a v2 payload, or a v1 one (`x402Version` 1, `scheme`, `network`, `payload`). */
  payload: PaymentPayload;
  /**
   * Unique per signed payment, the ledger's key: the EIP-3009 authorization nonce on EVM (`exact`); for `upto`,
   * `permit2:<payer>:<nonce>` (a Permit2 nonce is the payer's own); on Solana the SHA-256 of the transaction message
   * (it holds a random memo and the blockhash), so a replayed transaction repeats it.
   */
  nonce: string;
  payer: string;
  /** What the payer signed for: the token (mint) and the recipient, as the payload names them. */
  asset: string;
  payTo: string;
  /** An `upto` payment's Permit2 deadline (Unix seconds): its settlement must reach the chain before it. */
  deadline?: number;
}

/** The JSON of a payment header (base64), or a MalformedPaymentError naming the header. */
export function decodeBase64Json(header: string, name: string): unknown {
  const trimmed = header.trim();
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)) throw new MalformedPaymentError(`${name} is not base64`);
  try {
    return JSON.parse(Buffer.from(trimmed, "base64").toString("utf8"));
  } catch {
    throw new MalformedPaymentError(`${name} is not base64-encoded JSON`);
  }
}

/**
 * Decodes base64 JSON of an x402 v2 payment payload for the network's kind, checking its shape strictly: "exact",
 * or on EVM "upto" (as its `accepted.scheme` says).
 */
export function decodePaymentSignature(header: string, kind: "evm" | "svm"): DecodedPayment {
  return decodePaymentJson(decodeBase64Json(header, "PAYMENT-SIGNATURE"), kind);
}

/** The same, from the header's JSON. */
export function decodePaymentJson(json: unknown, kind: "evm" | "svm"): DecodedPayment {
  const upto = kind === "evm" && (json as { accepted?: { scheme?: unknown } } | null)?.accepted?.scheme === "upto";
  const schema = upto ? evmUptoPaymentPayload : kind === "evm" ? evmPaymentPayload : svmPaymentPayload;
  const result = schema.safeParse(json);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new MalformedPaymentError(
      `PAYMENT-SIGNATURE is not an x402 v2 ${upto ? "upto" : "exact"} payment payload: ${issue?.path.join(".") || "payload"}: ${issue?.message}`,
    );
  }
  const payload = result.data as unknown as PaymentPayload;
  const signedFor = { version: 2 as const, payload, asset: payload.accepted.asset, payTo: payload.accepted.payTo };
  if (kind === "svm")
    return { ...signedFor, ...svmTransactionIdentity((result.data.payload as { transaction: string }).transaction) };
  if (upto) {
    const { permit2Authorization } = result.data.payload as z.infer<typeof evmUptoPayload>;
    const payer = permit2Authorization.from.toLowerCase();
    const deadline = Number(permit2Authorization.deadline);
    return { ...signedFor, nonce: `permit2:${payer}:${BigInt(permit2Authorization.nonce)}`, payer, deadline };
  }
  const { authorization } = result.data.payload as z.infer<typeof evmExactPayload>;
  return { ...signedFor, nonce: authorization.nonce.toLowerCase(), payer: authorization.from.toLowerCase() };
}

/** The ledger key and the payer of a partially signed Solana transfer: its one signer besides the fee payer. */
function svmTransactionIdentity(transaction: string): { nonce: string; payer: string } {
  let decoded;
  let feePayer: string | undefined;
  try {
    decoded = getTransactionDecoder().decode(getBase64Encoder().encode(transaction));
    feePayer = getCompiledTransactionMessageDecoder().decode(decoded.messageBytes).staticAccounts[0];
  } catch (error) {
    throw new MalformedPaymentError(
      `PAYMENT-SIGNATURE carries a Solana transaction that cannot be decoded: ${(error as Error).message}`,
    );
  }
  const { messageBytes, signatures } = decoded;
  const payer = Object.entries(signatures).find(([address, signature]) => address !== feePayer && signature)?.[0];
  if (!payer) throw new MalformedPaymentError("PAYMENT-SIGNATURE carries a Solana transaction no payer has signed");
  return { nonce: `svm:${createHash("sha256").update(Uint8Array.from(messageBytes)).digest("hex")}`, payer };
}

import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { z } from "zod";
import type { NetworkDefinition } from "../../networks";
import {
  decodeBase64Json,
  decodePaymentSignature,
  evmExactPayload,
  MalformedPaymentError,
  type DecodedPayment,
} from "./payment-signature";

/*
 * x402 v1, for the clients that still speak it (`x402-fetch` 1.x, `x402-axios`): they read the requirements from the
 * 402's JSON body (`maxAmountRequired`, the network by its v1 name), sign the same EIP-3009 authorization as v2, and
 * send it in X-PAYMENT. The payment is matched against the same price and claimed under the same nonce as a v2 one,
 * so one authorization cannot be spent once in each version.
 */

/** A v1 "exact" requirement, as the 402 body carries it and the facilitator verifies it. */
export interface V1Requirements {
  scheme: "exact";
  network: string;
  maxAmountRequired: string;
  resource: string;
  description: string;
  mimeType: string;
  payTo: string;
  maxTimeoutSeconds: number;
  asset: string;
  extra: Record<string, unknown>;
}

/** The v2 requirements in v1's terms, for a network with a v1 name. */
export function v1Requirements(
  requirements: PaymentRequirements,
  v1Network: string,
  resource: { url: string; description?: string; mimeType?: string },
): V1Requirements {
  return {
    scheme: "exact",
    network: v1Network,
    maxAmountRequired: requirements.amount,
    resource: resource.url,
    description: resource.description ?? "",
    mimeType: resource.mimeType ?? "application/json",
    payTo: requirements.payTo,
    maxTimeoutSeconds: requirements.maxTimeoutSeconds,
    asset: requirements.asset,
    extra: requirements.extra,
  };
}

const v1PaymentPayload = z.object({
  x402Version: z.literal(1, { error: "x402Version must be 1" }),
  scheme: z.string(),
  network: z.string(),
  payload: evmExactPayload.loose(),
});

/** Decodes an X-PAYMENT header: base64 JSON of a v1 "exact" EVM payload, its shape checked strictly. */
export function decodeV1Payment(header: string, network: NetworkDefinition): DecodedPayment {
  if (network.kind !== "evm" || !network.x402V1Network) {
    throw new MalformedPaymentError(
      `x402 v1 payments (X-PAYMENT) are not accepted on ${network.id}; pay with x402 v2 (PAYMENT-SIGNATURE, requirements in the PAYMENT-REQUIRED header)`,
    );
  }
  const result = v1PaymentPayload.safeParse(decodeBase64Json(header, "X-PAYMENT"));
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new MalformedPaymentError(
      `X-PAYMENT is not an x402 v1 exact payment payload: ${issue?.path.join(".") || "payload"}: ${issue?.message}`,
    );
  }
  const { authorization } = result.data.payload;
  return {
    version: 1,
    payload: result.data as unknown as PaymentPayload,
    nonce: authorization.nonce.toLowerCase(),
    payer: authorization.from.toLowerCase(),
    asset: network.usdc.address,
    payTo: authorization.to,
  };
}

/** Why a v1 payment does not pay these requirements, or undefined when it does (exactly). */
export function v1Mismatch(payment: DecodedPayment, requirements: V1Requirements): string | undefined {
  const signed = payment.payload as unknown as z.infer<typeof v1PaymentPayload>;
  const { authorization } = signed.payload;
  if (signed.scheme !== requirements.scheme) return `Payment scheme is ${signed.scheme}, expected exact`;
  if (signed.network !== requirements.network) {
    return `Payment is for network ${signed.network}, expected ${requirements.network}`;
  }
  if (authorization.to.toLowerCase() !== requirements.payTo.toLowerCase()) {
    return `Payment is to ${authorization.to}, expected ${requirements.payTo}`;
  }
  if (authorization.value !== requirements.maxAmountRequired) {
    return `Payment amount is ${authorization.value}, expected exactly ${requirements.maxAmountRequired}`;
  }
  return undefined;
}

/** The payment as the facilitator is asked to verify and settle it: v1 payloads go with v1 requirements. */
export function facilitatorTerms(
  payment: DecodedPayment,
  requirements: PaymentRequirements,
  v1: V1Requirements | undefined,
): { payload: PaymentPayload; requirements: PaymentRequirements } {
  if (payment.version === 2 || !v1) return { payload: payment.payload, requirements };
  return { payload: payment.payload, requirements: v1 as unknown as PaymentRequirements };
}

/** A payment header as the ledger recorded it, of either version. */
export function decodeRecordedPayment(header: string, network: NetworkDefinition): DecodedPayment {
  const version = (decodeBase64Json(header, "the recorded payment") as { x402Version?: unknown }).x402Version;
  return version === 1 ? decodeV1Payment(header, network) : decodePaymentSignature(header, network.kind);
}

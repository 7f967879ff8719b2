import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { Challenge, Credential, evm, PaymentRequest } from "mppx";
import { getAddress, isAddressEqual } from "viem";
import { z } from "zod";
import type { BillableCall } from "../billing/payment-method";
import type { Problem } from "../billing/payment-methods";
import { resourceInfo } from "../billing/x402-challenge";
import { realmOf, type ChargeTerms } from "./charge-challenge";

const hex = (length?: number) =>
  z.string().regex(length ? new RegExp(`^0x[0-9a-fA-F]{${length}}$`) : /^0x[0-9a-fA-F]+$/);
const integer = z.string().regex(/^\d{1,78}$/);

/** MPP's EVM charge payload of type `authorization`: an EIP-3009 transferWithAuthorization, signed. */
const authorizationPayload = z.object({
  type: z.literal("authorization"),
  from: hex(40),
  to: hex(40),
  value: integer,
  validAfter: integer,
  validBefore: integer,
  nonce: hex(64),
  signature: hex(),
});

/** An MPP credential read, or the 402's problem with it. */
export type ReadCredential = { payment: PaymentPayload } | { problem: Problem };

const mismatch = (message: string): { problem: Problem } => ({ problem: { code: "payment_mismatch", message } });
const invalid = (message: string): { problem: Problem } => ({ problem: { code: "payment_invalid", message } });

/** Whether the value decodes as an MPP credential at all (base64url of JSON with a challenge and a payload). */
export function decodesAsCredential(header: string): boolean {
  try {
    Credential.deserialize(header);
    return true;
  } catch {
    return false;
  }
}

/**
 * An `Authorization: Payment` credential for this call, checked as MPP's EVM charge server checks it: its challenge
 * is one this deployment issued (the HMAC under its secret), for this resource and host, not expired, of exactly the
 * call's price to our pay-to in our USDC on our chain; its payload an EIP-3009 authorization of that amount to that
 * recipient whose nonce is the challenge's hash. Read as the x402 `exact` payment of the same authorization, which
 * x402's scheme then accepts as any (the signature checked locally, the nonce claimed once across both protocols).
 */
export function chargeCredential(
  header: string,
  terms: ChargeTerms,
  call: BillableCall,
  exact: PaymentRequirements,
): ReadCredential {
  let credential;
  try {
    credential = Credential.deserialize(header);
  } catch {
    return invalid(
      "Authorization: Payment is not an MPP credential (base64url of JSON with a challenge and a payload)",
    );
  }
  const { challenge } = credential;
  if (challenge.method !== "evm" || challenge.intent !== "charge") {
    return mismatch(`This deployment takes MPP's evm charge method, not ${challenge.method} ${challenge.intent}`);
  }
  if (!Challenge.verify(challenge, { secretKey: terms.secretKey })) {
    return mismatch("The credential's challenge was not issued by this deployment, or was altered: ask for a new 402");
  }
  if (challenge.realm !== realmOf(call)) {
    return mismatch(`The challenge was issued for ${challenge.realm}, not ${realmOf(call)}`);
  }
  const resource = metaOf(challenge)?.resource;
  if (resource !== call.resourceUrl) {
    return mismatch(`The challenge was issued for ${resource ?? "another resource"}, not ${call.resourceUrl}`);
  }
  const expires = challenge.expires ? Date.parse(challenge.expires) : Number.NaN;
  if (!(expires > Date.now())) {
    return invalid(`The challenge expired at ${challenge.expires ?? "an unknown time"}: ask for a new 402`);
  }
  const problem = termsProblem(challenge.request, terms, exact);
  if (problem) return mismatch(problem);
  const parsed = authorizationPayload.safeParse(credential.payload);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return invalid(
      `The credential's payload is not an evm charge authorization: ${issue?.path.join(".") || "payload"}`,
    );
  }
  const payload = parsed.data;
  if (payload.value !== exact.amount) {
    return mismatch(`The authorization is for ${payload.value}, and this request costs ${exact.amount}`);
  }
  if (!isAddressEqual(payload.to as `0x${string}`, exact.payTo as `0x${string}`)) {
    return mismatch(`The authorization pays ${payload.to}, not this deployment's ${getAddress(exact.payTo)}`);
  }
  if (payload.nonce.toLowerCase() !== evm.Types.challengeHash(challenge).toLowerCase()) {
    return mismatch("The authorization's nonce is not its challenge's hash: sign the challenge it names");
  }
  const { signature, type: _type, ...authorization } = payload;
  return {
    payment: {
      x402Version: 2,
      resource: resourceInfo(call),
      accepted: exact,
      payload: { signature, authorization },
    },
  };
}

/** What differs between the challenge's request and the call's terms (its price, our pay-to, asset and chain). */
function termsProblem(request: Record<string, unknown>, terms: ChargeTerms, exact: PaymentRequirements) {
  const details = request.methodDetails as { chainId?: unknown } | undefined;
  if (request.amount !== exact.amount) {
    return `The challenge is for ${String(request.amount)}, and this request costs ${exact.amount}`;
  }
  if (details?.chainId !== terms.chainId) return `The challenge is for chain ${String(details?.chainId)}`;
  const same = (a: unknown, b: string) => typeof a === "string" && a.toLowerCase() === b.toLowerCase();
  if (!same(request.recipient, exact.payTo) || !same(request.currency, exact.asset)) {
    return "The challenge names another recipient or currency than this deployment's";
  }
  return undefined;
}

/** The members the challenge carries in `opaque` (base64url of JSON: the resource, the challenge's own nonce). */
function metaOf(challenge: { meta?: Record<string, string>; opaque?: string }): Record<string, unknown> | undefined {
  if (challenge.meta) return challenge.meta;
  try {
    return challenge.opaque ? (PaymentRequest.deserialize(challenge.opaque) as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

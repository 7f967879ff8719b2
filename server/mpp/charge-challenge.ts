import { randomBytes } from "node:crypto";
import type { PaymentRequirements } from "@x402/core/types";
import { Challenge } from "mppx";
import { getAddress } from "viem";
import type { BillableCall } from "../billing/payment-method";

/** What this deployment's MPP challenges are made with: its secret, its chain and its USDC's decimals. */
export interface ChargeTerms {
  /** The key of the challenges' HMAC, shared by every instance over the database: a challenge is bound to it. */
  secretKey: string;
  chainId: number;
  decimals: number;
  /** How long a challenge may be paid (the x402 requirements' lifetime). */
  lifetimeSeconds: number;
}

/** MPP's challenge as mppx reads and writes it. */
export type ChargeChallenge = ReturnType<typeof Challenge.from>;

/** The realm a call's challenge names: the host the caller asked (the public origin's). */
export function realmOf(call: BillableCall): string {
  return new URL(call.resourceUrl).host;
}

/**
 * The call's MPP challenge: the EVM `charge` method (an EIP-3009 authorization) of exactly the x402 `exact` offer's
 * amount of its asset to its pay-to, for this resource, until it expires; its id an HMAC of all of it under the
 * deployment's secret, so that only a challenge this deployment issued, unaltered, is paid. A random member makes
 * each challenge (and so the authorization's nonce, derived from its id) unique.
 */
export function chargeChallenge(terms: ChargeTerms, call: BillableCall, exact: PaymentRequirements): ChargeChallenge {
  return Challenge.from({
    secretKey: terms.secretKey,
    realm: realmOf(call),
    method: "evm",
    intent: "charge",
    request: {
      amount: exact.amount,
      currency: getAddress(exact.asset),
      recipient: getAddress(exact.payTo),
      methodDetails: { chainId: terms.chainId, credentialTypes: ["authorization"], decimals: terms.decimals },
    },
    description: call.quote.description,
    expires: new Date(Date.now() + terms.lifetimeSeconds * 1000).toISOString(),
    meta: { resource: call.resourceUrl, nonce: randomBytes(12).toString("base64url") },
  });
}

/** The WWW-Authenticate value of a challenge. */
export function challengeHeader(challenge: ChargeChallenge): string {
  return Challenge.serialize(challenge);
}

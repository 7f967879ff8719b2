import { createHmac, randomUUID } from "node:crypto";
import type { PaymentRequirements } from "@x402/core/types";
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

/** The realm a call's challenge names: the host the caller asked (the public origin's). */
export function realmOf(call: BillableCall): string {
  return new URL(call.resourceUrl).host;
}

/**
 * The call's MPP challenge, as `WWW-Authenticate` carries it: the EVM `charge` method (an EIP-3009 authorization) of
 * exactly the x402 `exact` offer's amount of its asset to its pay-to, for this resource (in `opaque`), until it
 * expires; its id an HMAC of all of it under the deployment's secret, so that only a challenge this deployment issued,
 * unaltered, is paid. A random member of `opaque` makes each challenge (and so the authorization's nonce, derived
 * from its id) unique.
 *
 * Written here rather than by mppx's `Challenge.from` and `serialize`, which take 70 us a 402 (a pure-JavaScript HMAC,
 * a schema check, the request serialized twice): the same fields, canonical JSON and HMAC binding (draft-ryan-httpauth-
 * payment, mppx's `idBindingInput`), which `charge-challenge.test.ts` checks against mppx byte for byte; mppx's own
 * `Challenge.verify` checks the credentials.
 */
export function challengeHeader(terms: ChargeTerms, call: BillableCall, exact: PaymentRequirements): string {
  // Canonical JSON (keys sorted, as mppx's PaymentRequest.serialize writes it), base64url without padding.
  const details = `{"chainId":${terms.chainId},"credentialTypes":["authorization"],"decimals":${terms.decimals}}`;
  const currency = JSON.stringify(checksummed(exact.asset));
  const recipient = JSON.stringify(checksummed(exact.payTo));
  const json = `{"amount":${JSON.stringify(exact.amount)},"currency":${currency},"methodDetails":${details},"recipient":${recipient}}`;
  const request = base64url(json);
  // 122 random bits from Node's pooled entropy (a fresh randomBytes call costs a few microseconds).
  const nonce = randomUUID();
  const opaque = base64url(`{"nonce":${JSON.stringify(nonce)},"resource":${JSON.stringify(call.resourceUrl)}}`);
  const realm = realmOf(call);
  const expires = new Date(Date.now() + terms.lifetimeSeconds * 1000).toISOString();
  // realm | method | intent | request | expires | digest | opaque.
  const bound = `${realm}|evm|charge|${request}|${expires}||${opaque}`;
  const id = createHmac("sha256", terms.secretKey).update(bound).digest("base64url");
  const description = call.quote.description;
  // The id, request, opaque (base64url) and expires need no escaping.
  return `Payment id="${id}", realm=${quoted(realm)}, method="evm", intent="charge", request="${request}", description=${quoted(description)}, expires="${expires}", opaque="${opaque}"`;
}

/** The deployment's few addresses (its USDC, its pay-to), checksummed once each. */
const checksums = new Map<string, string>();
function checksummed(address: string): string {
  let known = checksums.get(address);
  if (known === undefined) {
    if (checksums.size >= 64) checksums.clear();
    known = getAddress(address);
    checksums.set(address, known);
  }
  return known;
}

const base64url = (text: string) => Buffer.from(text, "utf8").toString("base64url");

/** An auth-param's quoted string, escaped as mppx writes it (backslash, quote, anything past Latin-1). */
function quoted(value: string): string {
  const escaped = value
    .replace(/[\r\n]/g, " ")
    .replace(/\\/g, "\\\\")
    .replace(/"/g, '\\"')
    .replace(/[\u0100-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
  return `"${escaped}"`;
}

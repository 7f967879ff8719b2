import { verify as verifyEd25519 } from "node:crypto";
import { getAddressEncoder, getBase64Encoder, getTransactionDecoder, type Address } from "@solana/kit";
import type { PaymentRequirements } from "@x402/core/types";
import { authorizationTypes, PERMIT2_ADDRESS, uptoPermit2WitnessTypes } from "@x402/evm";
import secp256k1 from "secp256k1";
import { createPublicClient, hashTypedData, hexToBytes, http, keccak256, type Hex, type PublicClient } from "viem";
import type { NetworkDefinition } from "../../networks";
import type { DecodedPayment } from "./payment-signature";

/**
 * What a payment's signature says without asking anyone: `valid` (it is the payer's signature of exactly the terms
 * we sell: our pay-to, asset, amount and network), `forged` (it is not, and the payer is no contract wallet that
 * could vouch for it), or `unchecked` (a contract wallet's signature, ERC-1271 or ERC-6492, which only the chain can
 * judge: the facilitator does).
 */
export type LocalVerdict = "valid" | "forged" | "unchecked";

/** An ECDSA signature: r, s and v, 65 bytes. Anything else is a contract wallet's, or junk. */
const ECDSA_SIGNATURE = /^0x[0-9a-fA-F]{130}$/;
/** Whole bytes of hex: what any contract wallet's signature is. */
const HEX_BYTES = /^0x(?:[0-9a-fA-F]{2})+$/;
/** ERC-6492's suffix: the signature of a wallet not deployed yet (no code), which the facilitator can judge. */
const ERC6492_SUFFIX = "6492649264926492649264926492649264926492649264926492649264926492";

/**
 * Checks payments' signatures where they are made: EIP-712 recovery on EVM (EIP-3009 for `exact`, Permit2's
 * witness transfer for `upto`), the payer's Ed25519 signature of the transaction on Solana. No network, under half
 * a millisecond, but for a signature that does not recover to the payer: the chain then says whether the payer is a
 * contract (whose own rules the facilitator checks) or the signature is forged.
 */
export class LocalSignatureCheck {
  private client: PublicClient | undefined;

  constructor(
    private readonly network: NetworkDefinition,
    private readonly rpcUrl: string,
  ) {}

  async check(payment: DecodedPayment, requirements: PaymentRequirements): Promise<LocalVerdict> {
    const { network } = this;
    if (network.kind === "svm") return svmSignedByPayer(payment) ? "valid" : "forged";
    const signed = evmSigned(payment, requirements, network.chainId);
    if (!signed) return "unchecked";
    // Terms other than ours, whoever signed them: the facilitator would refuse them, so nobody is asked.
    if (!signed.ours) return "forged";
    if (!ECDSA_SIGNATURE.test(signed.signature)) return this.contractSignature(payment.payer, signed.signature);
    let hash: Hex;
    try {
      hash = hashTypedData(signed.typedData as Parameters<typeof hashTypedData>[0]);
    } catch {
      // A message that cannot be encoded cannot have been signed (the facilitator would fail to encode it too).
      return "forged";
    }
    return recoveredSigner(hash, signed.signature) === payment.payer ? "valid" : this.unlessContract(payment.payer);
  }

  /**
   * A signature that is not 65 bytes: a contract wallet's (ERC-6492 for one not deployed yet, ERC-1271 for one with
   * code), for the facilitator to judge; anything else is junk, refused here so that it costs no ledger row and no
   * facilitator call.
   */
  private contractSignature(payer: string, signature: string): Promise<LocalVerdict> | LocalVerdict {
    if (!HEX_BYTES.test(signature)) return "forged";
    if (signature.toLowerCase().endsWith(ERC6492_SUFFIX)) return "unchecked";
    return this.unlessContract(payer);
  }

  /** A signature that is not the payer's own key's: forged, unless the payer is a contract wallet. */
  private async unlessContract(payer: string): Promise<LocalVerdict> {
    this.client ??= createPublicClient({ transport: http(this.rpcUrl, { retryCount: 0, timeout: 5_000 }) });
    try {
      const code = await this.client.getCode({ address: payer as Hex });
      return code && code !== "0x" ? "unchecked" : "forged";
    } catch {
      // The chain cannot say: the facilitator judges, before any work.
      return "unchecked";
    }
  }
}

/**
 * The address whose key made a 65-byte signature of `hash` (lowercase), or undefined when none did: libsecp256k1's
 * recovery (the `secp256k1` package's prebuilt binding), 0.07 ms where viem's JavaScript takes 2.6 ms. It takes any
 * s below the curve's order and v 0, 1, 27 or 28, as viem's recovery does; a caller that must match a contract's
 * stricter ECDSA checks s and v itself (voucher-check.ts).
 */
export function recoveredSigner(hash: Hex, signature: string): string | undefined {
  const bytes = hexToBytes(signature as Hex);
  const v = bytes[64]!;
  const recovery = v >= 27 ? v - 27 : v;
  if (recovery !== 0 && recovery !== 1) return undefined;
  try {
    const publicKey = secp256k1.ecdsaRecover(bytes.subarray(0, 64), recovery, hexToBytes(hash), false);
    return `0x${keccak256(publicKey.subarray(1)).slice(-40)}`;
  } catch {
    return undefined;
  }
}

/**
 * The EIP-712 message an EVM payment must have signed to pay for `requirements`, and its signature: the payer's
 * own fields (from, nonce, validity) as sent, and what we sell (pay-to, asset, amount) from the requirements, so that
 * a signature of anything else (another recipient, token or amount, another chain) does not recover to the payer;
 * `ours` says whether the fields sent name our terms too. Either way it is refused before any ledger row or
 * facilitator call, as the facilitator would refuse it.
 */
function evmSigned(payment: DecodedPayment, requirements: PaymentRequirements, chainId: number) {
  const signed = payment.payload.payload as Record<string, unknown> & { signature?: string };
  if (typeof signed.signature !== "string") return undefined;
  if (requirements.scheme === "upto") {
    const authorization = signed.permit2Authorization as {
      from: string;
      permitted: { token: string; amount: string };
      spender: string;
      nonce: string;
      deadline: string;
      witness: { to: string; facilitator: string; validAfter: string };
    };
    const ours =
      sameAddress(authorization.witness.to, requirements.payTo) &&
      sameAddress(authorization.permitted.token, requirements.asset) &&
      BigInt(authorization.permitted.amount) === BigInt(requirements.amount);
    return {
      signature: signed.signature,
      ours,
      typedData: {
        domain: { name: "Permit2", chainId, verifyingContract: PERMIT2_ADDRESS },
        types: uptoPermit2WitnessTypes,
        primaryType: "PermitWitnessTransferFrom",
        message: {
          permitted: { token: requirements.asset, amount: BigInt(requirements.amount) },
          spender: authorization.spender.toLowerCase(),
          nonce: BigInt(authorization.nonce),
          deadline: BigInt(authorization.deadline),
          witness: {
            facilitator: authorization.witness.facilitator.toLowerCase(),
            to: requirements.payTo,
            validAfter: BigInt(authorization.witness.validAfter),
          },
        },
        signature: signed.signature,
      },
    };
  }
  const authorization = signed.authorization as Record<
    "from" | "to" | "value" | "validAfter" | "validBefore",
    string
  > & {
    nonce: string;
  };
  const extra = requirements.extra as { name?: string; version?: string };
  const ours =
    sameAddress(authorization.to, requirements.payTo) && BigInt(authorization.value) === BigInt(requirements.amount);
  return {
    signature: signed.signature,
    ours,
    typedData: {
      domain: { name: extra.name, version: extra.version, chainId, verifyingContract: requirements.asset },
      types: authorizationTypes,
      primaryType: "TransferWithAuthorization",
      message: {
        // Lowercase: an address's case is no part of what is signed, and a bad checksum must not make it unreadable.
        from: authorization.from.toLowerCase(),
        to: requirements.payTo,
        value: BigInt(requirements.amount),
        validAfter: BigInt(authorization.validAfter),
        validBefore: BigInt(authorization.validBefore),
        nonce: authorization.nonce,
      },
      signature: signed.signature,
    },
  };
}

const sameAddress = (one: string, other: string) => one.toLowerCase() === other.toLowerCase();

/** Whether the payer's signature in a Solana transfer is its key's signature of the transaction's message. */
function svmSignedByPayer(payment: DecodedPayment): boolean {
  const { transaction } = payment.payload.payload as { transaction: string };
  const decoded = getTransactionDecoder().decode(getBase64Encoder().encode(transaction));
  const signature = decoded.signatures[payment.payer as Address];
  if (!signature) return false;
  const publicKey = Buffer.from(getAddressEncoder().encode(payment.payer as Address)).toString("base64url");
  return verifyEd25519(
    null,
    Uint8Array.from(decoded.messageBytes),
    { key: { kty: "OKP", crv: "Ed25519", x: publicKey }, format: "jwk" },
    Uint8Array.from(signature),
  );
}

import { verify as verifyEd25519 } from "node:crypto";
import { getAddressEncoder, getBase64Encoder, getTransactionDecoder, type Address } from "@solana/kit";
import type { PaymentRequirements } from "@x402/core/types";
import { authorizationTypes, PERMIT2_ADDRESS, uptoPermit2WitnessTypes } from "@x402/evm";
import secp256k1 from "secp256k1";
import {
  BaseError,
  createPublicClient,
  encodeDeployData,
  erc6492SignatureValidatorAbi,
  erc6492SignatureValidatorByteCode,
  hashTypedData,
  hexToBool,
  hexToBytes,
  http,
  HttpRequestError,
  keccak256,
  TimeoutError,
  type Hex,
  type PublicClient,
} from "viem";
import type { NetworkDefinition } from "../../networks";
import type { DecodedPayment } from "./payment-signature";

/**
 * What a payment's signature says before any ledger row, hold or facilitator call: `valid` (it is the payer's
 * signature of exactly the terms we sell: our pay-to, asset, amount and network, made by its key or vouched for by
 * its contract wallet), `forged` (it is not), or `unknown` (a contract wallet's, and the chain cannot be read now).
 */
export type LocalVerdict = "valid" | "forged" | "unknown";

/** An ECDSA signature: r, s and v, 65 bytes. Anything else is a contract wallet's, or junk. */
const ECDSA_SIGNATURE = /^0x[0-9a-fA-F]{130}$/;
/** Whole bytes of hex: what any contract wallet's signature is. */
const HEX_BYTES = /^0x(?:[0-9a-fA-F]{2})+$/;
/** ERC-6492's suffix: the signature of a wallet not deployed yet, with the factory call that would deploy it. */
const ERC6492_SUFFIX = "6492649264926492649264926492649264926492649264926492649264926492";
/** How long an address's having code is believed: a wallet found deployed stays so; one without may be deployed. */
const CODE_KEPT_MS = 10 * 60_000;
const NO_CODE_KEPT_MS = 60_000;
/** How many addresses' code the check keeps; beyond, it starts again. */
const CODES_KEPT = 10_000;

/**
 * Checks payments' signatures where they are made: EIP-712 recovery on EVM (EIP-3009 for `exact`, Permit2's
 * witness transfer for `upto`), the payer's Ed25519 signature of the transaction on Solana. No network, under half
 * a millisecond, but for a contract wallet's signature: one `eth_call` of ERC-6492's universal validator then says
 * whether the wallet (deployed, ERC-1271, or not yet, ERC-6492 with its factory call) vouches for it, as the token's
 * and the facilitator's own checks would. Whether a payer has code is kept a while, so that junk signatures in the
 * name of an account without code cost no chain call at all.
 */
export class LocalSignatureCheck {
  private client: PublicClient | undefined;
  private readonly codes = new Map<string, { code: boolean; until: number }>();

  constructor(
    private readonly network: NetworkDefinition,
    private readonly rpcUrl: string,
  ) {}

  async check(payment: DecodedPayment, requirements: PaymentRequirements): Promise<LocalVerdict> {
    const { network } = this;
    if (network.kind === "svm") return svmSignedByPayer(payment) ? "valid" : "forged";
    const signed = evmSigned(payment, requirements, network.chainId);
    // No signature at all (the decoders let none through): nothing was signed.
    if (!signed) return "forged";
    // Terms other than ours, whoever signed them: the facilitator would refuse them, so nobody is asked.
    if (!signed.ours) return "forged";
    let hash: Hex;
    try {
      hash = hashTypedData(signed.typedData as Parameters<typeof hashTypedData>[0]);
    } catch {
      // A message that cannot be encoded cannot have been signed (the facilitator would fail to encode it too).
      return "forged";
    }
    return this.checkHash(payment.payer, hash, signed.signature);
  }

  /**
   * Whether `signer` (lower-case hex) signed `hash`: its key's ECDSA signature, recovered here; else its contract
   * wallet's (deployed: ERC-1271; not yet: ERC-6492), asked in one `eth_call`, and only of an address with code or a
   * signature carrying a factory call. A payment's typed data, or a signed-in wallet's message (EIP-191).
   */
  async checkHash(signer: string, hash: Hex, signature: string): Promise<LocalVerdict> {
    if (!HEX_BYTES.test(signature)) return "forged";
    if (ECDSA_SIGNATURE.test(signature) && recoveredSigner(hash, signature) === signer) return "valid";
    // A wallet not deployed yet: only its factory call, simulated, can say.
    if (signature.toLowerCase().endsWith(ERC6492_SUFFIX)) return this.validated(signer, hash, signature);
    // Any other signature not the signer's key's is its contract's to vouch for: none without code.
    const code = await this.hasCode(signer);
    if (code === undefined) return "unknown";
    return code ? this.validated(signer, hash, signature) : "forged";
  }

  private get chain(): PublicClient {
    this.client ??= createPublicClient({ transport: http(this.rpcUrl, { retryCount: 0, timeout: 5_000 }) });
    return this.client;
  }

  /** Whether `address` has code (kept a while), or undefined when the chain cannot say. */
  private async hasCode(address: string): Promise<boolean | undefined> {
    const now = Date.now();
    const known = this.codes.get(address);
    if (known && known.until > now) return known.code;
    let code: boolean;
    try {
      const bytes = await this.chain.getCode({ address: address as Hex });
      code = bytes !== undefined && bytes !== "0x";
    } catch {
      return undefined;
    }
    if (this.codes.size >= CODES_KEPT) this.codes.clear();
    this.codes.set(address, { code, until: now + (code ? CODE_KEPT_MS : NO_CODE_KEPT_MS) });
    return code;
  }

  /**
   * ERC-6492's universal validator, run in one `eth_call` without being deployed: it deploys a wallet the signature
   * carries a factory call for, then asks the wallet (ERC-1271's isValidSignature), or recovers an EOA's signature.
   * Its refusal (false, or a revert) is `forged`; a chain that cannot be reached, `unknown`.
   */
  private async validated(payer: string, hash: Hex, signature: string): Promise<LocalVerdict> {
    const data = encodeDeployData({
      abi: erc6492SignatureValidatorAbi,
      args: [payer as Hex, hash, signature as Hex],
      bytecode: erc6492SignatureValidatorByteCode,
    });
    try {
      const result = await this.chain.call({ data });
      return result.data !== undefined && hexToBool(result.data) ? "valid" : "forged";
    } catch (error) {
      return unreachable(error) ? "unknown" : "forged";
    }
  }
}

/** Whether a chain call failed for want of an answer (the transport), rather than by the chain's own refusal. */
function unreachable(error: unknown): boolean {
  if (!(error instanceof BaseError)) return true;
  return error.walk((cause) => cause instanceof HttpRequestError || cause instanceof TimeoutError) !== null;
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

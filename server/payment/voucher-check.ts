import { randomUUID } from "node:crypto";
import type { BeforeVerifyHook, VerifyContext } from "@x402/core/server";
import type { PaymentRequirements, VerifyResponse } from "@x402/core/types";
import {
  BATCH_SETTLEMENT_ADDRESS,
  BATCH_SETTLEMENT_DOMAIN,
  isBatchSettlementDepositPayload,
  isBatchSettlementRefundPayload,
  isBatchSettlementVoucherPayload,
  voucherTypes,
} from "@x402/evm";
import { computeChannelId } from "@x402/evm/batch-settlement/client";
import {
  ErrDepositBelowMinDeposit,
  type BatchSettlementEvmScheme,
  type Channel,
} from "@x402/evm/batch-settlement/server";
import { getAddress, getTypesForEIP712Domain, hashDomain, keccak256, toHex, type Hex } from "viem";
import { recoveredSigner } from "./local-signature";

/**
 * The `batch-settlement` scheme's before-verify step, ours: @x402/evm's server scheme (2.27, `handleBeforeVerify`
 * and `verifyVoucherLocally`) checks every voucher's EIP-712 signature with viem's JavaScript secp256k1, 3.60 ms a
 * voucher (BENCHMARKS.md, section 12), most of what a voucher call cost beyond a prepaid call. This is the same step,
 * rule for rule and with the same reason codes, but the signature is recovered with libsecp256k1 (0.07 ms), the
 * channel id is hashed once rather than three times (and remembered per config: 0.35 ms a hash with viem), and the
 * voucher's EIP-712 domain is hashed once per chain (viem's hashTypedData hashes it on every call: 0.3 ms).
 * Everything else (the reservation after verify, settling the charge, claims, refunds) stays the SDK's. Where the
 * SDK would accept what the channel contract refuses (a high s, a v other than 27 or 28: viem takes both), this
 * refuses it, as the contract would refuse the voucher's claim.
 */
export function voucherBeforeVerify(scheme: BatchSettlementEvmScheme): BeforeVerifyHook {
  return (context) => beforeVerify(scheme, context);
}

// The SDK's reason codes (@x402/evm's batch-settlement errors, which the package does not export but one).
export const ErrInvalidChannelId = "invalid_batch_settlement_evm_channel_id_invalid";
export const ErrChannelIdMismatch = "invalid_batch_settlement_evm_channel_id_mismatch";
export const ErrCumulativeAmountMismatch = "invalid_batch_settlement_evm_cumulative_amount_mismatch";
export const ErrVerificationStateUnavailable = "invalid_batch_settlement_evm_verification_state_unavailable";
export const ErrInvalidVoucherSignature = "invalid_batch_settlement_evm_voucher_signature";
export const ErrCumulativeExceedsBalance = "invalid_batch_settlement_evm_cumulative_exceeds_balance";
export const ErrCumulativeAmountBelowClaimed = "invalid_batch_settlement_evm_cumulative_below_claimed";
export const ErrReceiverMismatch = "invalid_batch_settlement_evm_receiver_mismatch";
export const ErrReceiverAuthorizerMismatch = "invalid_batch_settlement_evm_receiver_authorizer_mismatch";
export const ErrTokenMismatch = "invalid_batch_settlement_evm_token_mismatch";
export const ErrWithdrawDelayMismatch = "invalid_batch_settlement_evm_withdraw_delay_mismatch";
export const ErrWithdrawDelayOutOfRange = "invalid_batch_settlement_evm_withdraw_delay_out_of_range";

const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000";
/** The contract's bounds on a channel's withdraw delay, in seconds (the SDK's MIN_ and MAX_WITHDRAW_DELAY). */
const WITHDRAW_DELAY = { min: 900, max: 2_592_000 };
const CHANNEL_ID = /^0x[0-9a-fA-F]{64}$/;
/** A 65-byte r, s, v signature, the only kind the contract recovers for a payerAuthorizer. */
const SIGNATURE = /^0x[0-9a-fA-F]{130}$/;
/** secp256k1's order over 2: a larger s is the malleable twin of a signature, which the contract refuses (EIP-2). */
const HALF_ORDER = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;

type Abort = { abort: true; reason: string; message: string };
type VoucherPayload = { channelConfig: Channel["channelConfig"]; voucher: VoucherFields };
type VoucherFields = { channelId: string; maxClaimableAmount: string; signature: string };

const abort = (reason: string, message: string): Abort => ({ abort: true, reason, message });

async function beforeVerify(scheme: BatchSettlementEvmScheme, { paymentPayload, requirements }: VerifyContext) {
  const raw: unknown = paymentPayload.payload;
  const paid = isBatchSettlementVoucherPayload(raw) || isBatchSettlementDepositPayload(raw);
  const refund = isBatchSettlementRefundPayload(raw);
  if (!paid && !refund) return;
  const terms = requirements as PaymentRequirements;
  // As the SDK's: outside the guarded part, so that a malformed amount fails the hook (and the facilitator judges).
  if (scheme.getEnforceMinDeposit() && isBatchSettlementDepositPayload(raw)) {
    const minimum = BigInt(await scheme.resolveMinDepositHint(terms));
    if (BigInt(raw.deposit.amount) < minimum) {
      return abort(ErrDepositBelowMinDeposit, "Deposit amount is below the server minimum");
    }
  }
  const { channelConfig, voucher } = raw as VoucherPayload;
  try {
    if (!CHANNEL_ID.test(voucher.channelId))
      return abort(ErrInvalidChannelId, "Channel id does not match channel config");
    // The channel id the config hashes to: the binding checked here, the config's and the stored channel's below.
    const configId = channelIdOf(channelConfig, terms.network);
    if (configId.toLowerCase() !== voucher.channelId.toLowerCase()) {
      return abort(ErrChannelIdMismatch, "Channel id does not match channel config");
    }
    const { channelId } = voucher;
    const now = Date.now();
    // 32 bytes of hex as the SDK's nonce, from Node's pooled UUIDs (244 random bits): randomBytes took 0.05 ms.
    const pendingId = `0x${randomUUID().replaceAll("-", "")}${randomUUID().replaceAll("-", "")}`;
    const snapshot = await scheme.getStorage().get(channelId);
    const charged = snapshot?.chargedCumulativeAmount ?? chargedWhenUnknown(voucher.maxClaimableAmount, terms, paid);
    const expected = refund ? BigInt(charged) : BigInt(charged) + BigInt(terms.amount);
    if (BigInt(voucher.maxClaimableAmount) !== expected) {
      // The corrective 402 tells the client the channel's state (or what the voucher implies, for an unknown one).
      scheme.rememberChannelSnapshot(paymentPayload, snapshot ?? provisionalChannel(raw as VoucherPayload, charged));
      return abort(ErrCumulativeAmountMismatch, "Client voucher base does not match server state");
    }
    scheme.mergeRequestContext(paymentPayload, { channelId, pendingId, channelSnapshot: snapshot });
    if (isBatchSettlementVoucherPayload(raw)) {
      const result = checkedLocally(scheme, raw as VoucherPayload, terms, snapshot, now, configId);
      if (result) {
        scheme.mergeRequestContext(paymentPayload, { localVerify: true });
        return { skip: true as const, result };
      }
    }
  } catch {
    return abort(ErrVerificationStateUnavailable, "Unable to establish channel verification state");
  }
}

/**
 * A voucher's verdict without the facilitator, where the channel's mirrored chain state is fresh and a
 * payerAuthorizer (an EOA) signs; undefined where the facilitator must judge (no fresh state, or the payer itself
 * signs, which may be a contract wallet's ERC-1271 signature).
 */
function checkedLocally(
  scheme: BatchSettlementEvmScheme,
  { channelConfig, voucher }: VoucherPayload,
  requirements: PaymentRequirements,
  channel: Channel | undefined,
  now: number,
  configId: string,
): VerifyResponse | undefined {
  const synced = channel?.onchainSyncedAt;
  if (!channel || synced === undefined || now - synced > scheme.getOnchainStateTtlMs()) return undefined;
  if (channelConfig.payerAuthorizer === ZERO_ADDRESS) return undefined;
  const payer = channelConfig.payer;
  const invalid = (invalidReason: string): VerifyResponse => ({ isValid: false, invalidReason, payer });
  const configError = channelConfigError(channelConfig, requirements);
  if (configError) return invalid(configError);
  if (configId.toLowerCase() !== channel.channelId.toLowerCase()) return invalid(ErrChannelIdMismatch);
  if (!signedBy(channelConfig.payerAuthorizer, voucher, requirements.network)) {
    return invalid(ErrInvalidVoucherSignature);
  }
  const ceiling = BigInt(voucher.maxClaimableAmount);
  if (ceiling > BigInt(channel.balance)) return invalid(ErrCumulativeExceedsBalance);
  if (ceiling <= BigInt(channel.totalClaimed)) return invalid(ErrCumulativeAmountBelowClaimed);
  return {
    isValid: true,
    payer,
    extra: {
      channelId: voucher.channelId,
      balance: channel.balance,
      totalClaimed: channel.totalClaimed,
      withdrawRequestedAt: channel.withdrawRequestedAt,
      refundNonce: channel.refundNonce.toString(),
    },
  };
}

/**
 * What in the channel's config these terms do not allow (the SDK's validateChannelConfig, whose first rule, the
 * config hashing to the voucher's channel id, the caller has checked): receiver, receiverAuthorizer, token, delay.
 * An address that is none throws, as viem's getAddress throws in the SDK's.
 */
function channelConfigError(
  config: VoucherPayload["channelConfig"],
  requirements: PaymentRequirements,
): string | undefined {
  const { receiver, receiverAuthorizer, token, withdrawDelay } = config;
  if (getAddress(receiver) !== getAddress(requirements.payTo)) return ErrReceiverMismatch;
  const extra = requirements.extra as { receiverAuthorizer?: string; withdrawDelay?: unknown } | undefined;
  const required = extra?.receiverAuthorizer;
  if (!required || getAddress(required) === ZERO_ADDRESS || getAddress(receiverAuthorizer) !== getAddress(required)) {
    return ErrReceiverAuthorizerMismatch;
  }
  if (getAddress(token) !== getAddress(requirements.asset)) return ErrTokenMismatch;
  if (extra?.withdrawDelay !== undefined && withdrawDelay !== Number(extra.withdrawDelay)) {
    return ErrWithdrawDelayMismatch;
  }
  if (withdrawDelay < WITHDRAW_DELAY.min || withdrawDelay > WITHDRAW_DELAY.max) return ErrWithdrawDelayOutOfRange;
  return undefined;
}

/**
 * Whether `authorizer`'s key signed the voucher, as the channel contract checks it at claim time: 65 bytes, s in the
 * lower half of the order, v 27 or 28, recovered (libsecp256k1) to the authorizer. A message viem cannot hash (an
 * amount beyond uint128) or an address that is none is no signature, as in the SDK.
 */
export function signedBy(authorizer: string, voucher: VoucherFields, network: string): boolean {
  const { signature } = voucher;
  if (typeof signature !== "string" || !SIGNATURE.test(signature)) return false;
  if (BigInt(`0x${signature.slice(66, 130)}`) > HALF_ORDER) return false;
  const v = Number.parseInt(signature.slice(130), 16);
  if (v !== 27 && v !== 28) return false;
  let digest: Hex;
  try {
    getAddress(authorizer);
    digest = voucherDigest(voucher, network);
  } catch {
    return false;
  }
  return recoveredSigner(digest, signature) === authorizer.toLowerCase();
}

/**
 * The EIP-712 hash of a voucher, as viem's hashTypedData makes it (the same domain, types and message, checked as
 * it checks them: a channel id of 32 bytes, the caller's; an amount that is a uint128, here), the domain's hash kept
 * per chain and the struct encoded by hand (viem's generic encoding took 0.25 ms of a voucher call).
 */
export function voucherDigest({ channelId, maxClaimableAmount }: Omit<VoucherFields, "signature">, network: string) {
  const amount = BigInt(maxClaimableAmount);
  if (amount < 0n || amount >= 2n ** 128n) throw new Error(`maxClaimableAmount ${amount} is no uint128`);
  // The struct's ABI encoding by hand: its type's hash, the 32 bytes of the id, the amount as a 32-byte word.
  const struct = keccak256(`${VOUCHER_TYPE_HASH}${channelId.slice(2)}${amount.toString(16).padStart(64, "0")}`);
  return keccak256(`0x1901${domainHashOf(network).slice(2)}${struct.slice(2)}`);
}

/** EIP-712's hash of the Voucher type (voucherTypes' one struct, as viem's encodeType writes it). */
const VOUCHER_TYPE_HASH = keccak256(
  toHex(`Voucher(${voucherTypes.Voucher.map(({ name, type }) => `${type} ${name}`).join(",")})`),
);

const domainHashes = new Map<string, Hex>();

/** The batch-settlement EIP-712 domain's hash on an `eip155:<id>` network; anything else throws, as in the SDK. */
function domainHashOf(network: string): Hex {
  let hash = domainHashes.get(network);
  if (hash) return hash;
  const match = /^eip155:(\d+)$/.exec(network);
  const chainId = match ? Number(match[1]) : Number.NaN;
  if (!Number.isSafeInteger(chainId)) throw new Error(`Invalid CAIP-2 chain ID: ${network}`);
  const domain = { ...BATCH_SETTLEMENT_DOMAIN, chainId, verifyingContract: BATCH_SETTLEMENT_ADDRESS };
  const types = { EIP712Domain: getTypesForEIP712Domain({ domain }) };
  hash = hashDomain({ domain, types } as unknown as Parameters<typeof hashDomain>[0]);
  domainHashes.set(network, hash);
  return hash;
}

const channelIds = new Map<string, Hex>();
const CHANNEL_IDS_KEPT = 10_000;

/**
 * The SDK's computeChannelId, remembered: a channel's config comes with each of its vouchers. The key is the JSON
 * of everything the id is hashed from (distinct values, distinct keys); only an id computed is kept, so a config
 * the SDK refuses (it throws) is refused every time. The oldest go first past 10,000.
 */
function channelIdOf(config: Channel["channelConfig"], network: string): Hex {
  const { payer, payerAuthorizer, receiver, receiverAuthorizer, token, withdrawDelay, salt } = config;
  const key = JSON.stringify([
    network,
    payer,
    payerAuthorizer,
    receiver,
    receiverAuthorizer,
    token,
    withdrawDelay,
    salt,
  ]);
  let id = channelIds.get(key);
  if (id) return id;
  id = computeChannelId(config, network);
  if (channelIds.size >= CHANNEL_IDS_KEPT) channelIds.delete(channelIds.keys().next().value!);
  channelIds.set(key, id);
  return id;
}

/** What a channel the server has no row of has been charged, as the SDK infers it from the voucher. */
function chargedWhenUnknown(signedMaxClaimable: string, requirements: PaymentRequirements, paid: boolean): string {
  if (!paid) return signedMaxClaimable;
  const signed = BigInt(signedMaxClaimable);
  const price = BigInt(requirements.amount);
  return signed < price ? "0" : (signed - price).toString();
}

/** The channel a voucher implies, for the corrective 402 of a channel the server has no row of (the SDK's). */
function provisionalChannel({ channelConfig, voucher }: VoucherPayload, charged: string): Channel {
  return {
    channelId: voucher.channelId,
    channelConfig,
    chargedCumulativeAmount: charged,
    signedMaxClaimable: voucher.maxClaimableAmount,
    signature: voucher.signature as Hex,
    balance: "0",
    totalClaimed: "0",
    withdrawRequestedAt: 0,
    refundNonce: 0,
    lastRequestTimestamp: Date.now(),
  };
}

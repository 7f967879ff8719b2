import type { VerifyContext } from "@x402/core/server";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { BATCH_SETTLEMENT_ADDRESS, BATCH_SETTLEMENT_DOMAIN, voucherTypes } from "@x402/evm";
import { computeChannelId } from "@x402/evm/batch-settlement/client";
import { BatchSettlementEvmScheme, type Channel } from "@x402/evm/batch-settlement/server";
import { hashTypedData, type Hex } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabases } from "../../cli/dev-stack/test-databases";
import { getNetwork } from "../../networks";
import type { EvmNetwork } from "../../networks/network";
import { openStorage } from "../storage/open-storage";
import type { Storage } from "../storage/storage";
import { channelScheme } from "./channel-scheme";
import {
  ErrChannelIdMismatch,
  ErrCumulativeAmountBelowClaimed,
  ErrCumulativeAmountMismatch,
  ErrCumulativeExceedsBalance,
  ErrInvalidChannelId,
  ErrInvalidVoucherSignature,
  ErrReceiverMismatch,
  ErrVerificationStateUnavailable,
  voucherDigest,
} from "./voucher-check";

const network = getNetwork("eip155:137") as EvmNetwork;
const payTo = "0x2546BcD3c84621e976D8185a91A922aE77ECEc30";
const authorizerKey = generatePrivateKey();
const payerKey = privateKeyToAccount(generatePrivateKey());
const otherKey = privateKeyToAccount(generatePrivateKey());
const ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const ZERO = "0x0000000000000000000000000000000000000000";

const settings = {
  authorizerKey,
  withdrawDelaySeconds: 86_400,
  claims: { intervalMs: 1, thresholdAtomic: 1n, checkMs: 1 },
};
// Ours (the deployment's scheme), and the SDK's own over the same storage (ours, a real SQLite file): each case is
// put to both.
const databases = useTestDatabases();
let storage: Storage;
let ours: BatchSettlementEvmScheme;
let sdk: BatchSettlementEvmScheme;
beforeAll(async () => {
  storage = await openStorage(await databases.newDatabaseUrl("sqlite"));
  ours = channelScheme(payTo, settings, storage.channels);
  sdk = new BatchSettlementEvmScheme(payTo, {
    storage: storage.channels,
    receiverAuthorizerSigner: ours.getReceiverAuthorizerSigner(),
    withdrawDelay: 86_400,
  });
});
afterAll(() => storage.close());

type Config = Channel["channelConfig"];
const baseConfig: Config = {
  payer: payerKey.address,
  payerAuthorizer: payerKey.address,
  receiver: payTo,
  receiverAuthorizer: privateKeyToAccount(authorizerKey).address,
  token: network.usdc.address as Hex,
  withdrawDelay: 86_400,
  salt: `0x${"00".repeat(31)}07`,
};
const requirements: PaymentRequirements = {
  scheme: "batch-settlement",
  network: network.id,
  asset: network.usdc.address,
  amount: "1000",
  payTo,
  maxTimeoutSeconds: 300,
  extra: { ...network.usdc.eip712, receiverAuthorizer: baseConfig.receiverAuthorizer, withdrawDelay: 86_400 },
};

const sign = (key: typeof payerKey, channelId: Hex, maxClaimableAmount: bigint) =>
  key.signTypedData({
    domain: { ...BATCH_SETTLEMENT_DOMAIN, chainId: network.chainId, verifyingContract: BATCH_SETTLEMENT_ADDRESS },
    types: voucherTypes,
    primaryType: "Voucher",
    message: { channelId, maxClaimableAmount },
  });

/** The same signature with s replaced by its twin n - s (and v flipped): valid math, refused by the contract. */
function highS(signature: Hex): Hex {
  const s = BigInt(`0x${signature.slice(66, 130)}`);
  const v = signature.slice(130) === "1b" ? "1c" : "1b";
  return `${signature.slice(0, 66)}${(ORDER - s).toString(16).padStart(64, "0")}${v}` as Hex;
}

interface Case {
  config?: Partial<Config>;
  /** The channel's row: fresh chain state, 5,000 charged, 2 USDC deposited, unless told; null: no row. */
  stored?: Partial<Channel> | null;
  channelId?: (id: Hex) => string;
  amount?: bigint;
  signature?: (signature: Hex, id: Hex, amount: bigint) => string | Promise<string>;
}

/** A voucher payload for the case, its channel stored as told. */
async function voucherCall({ config = {}, stored = {}, channelId, amount = 6_000n, signature }: Case) {
  const channelConfig = { ...baseConfig, ...config };
  // A config viem cannot hash names some channel all the same.
  const id = ((): Hex => {
    try {
      return computeChannelId(channelConfig, network.id);
    } catch {
      return `0x${"5a".repeat(32)}`;
    }
  })();
  if (stored !== null) {
    await storage.channels.updateChannel(id, () => ({
      channelId: id.toLowerCase(),
      channelConfig,
      chargedCumulativeAmount: "5000",
      signedMaxClaimable: "5000",
      signature: `0x${"ab".repeat(65)}`,
      balance: "2000000",
      totalClaimed: "0",
      withdrawRequestedAt: 0,
      refundNonce: 0,
      onchainSyncedAt: Date.now(),
      lastRequestTimestamp: Date.now(),
      ...stored,
    }));
  } else {
    await storage.channels.updateChannel(id, () => undefined);
  }
  const signed = await sign(payerKey, id, amount);
  const voucher = {
    channelId: channelId ? channelId(id) : id,
    maxClaimableAmount: amount.toString(),
    signature: signature ? await signature(signed, id, amount) : signed,
  };
  return { payload: { type: "voucher", channelConfig, voucher }, requirements } as const;
}

/** The hook's answer and the request context it left (its random pending id aside), from one scheme. */
async function run(scheme: BatchSettlementEvmScheme, call: Awaited<ReturnType<typeof voucherCall>>) {
  const paymentPayload = { x402Version: 2, accepted: requirements, payload: call.payload } as unknown as PaymentPayload;
  const context = { paymentPayload, requirements: call.requirements, declaredExtensions: {} } as VerifyContext;
  const answer = await scheme.schemeHooks.onBeforeVerify!(context);
  const { pendingId, channelSnapshot, ...rest } = scheme.readRequestContext(paymentPayload) ?? {};
  if (pendingId !== undefined) expect(pendingId).toMatch(/^0x[0-9a-f]{64}$/);
  const snapshot = channelSnapshot && { ...channelSnapshot, lastRequestTimestamp: 0 };
  return { answer, context: { ...rest, pending: pendingId !== undefined, snapshot } };
}

/** Ours, checked to answer as the SDK's scheme answers the same call. */
async function asTheSdk(spec: Case) {
  const call = await voucherCall(spec);
  const mine = await run(ours, call);
  expect(mine).toEqual(await run(sdk, call));
  return mine.answer;
}

const refusal = (reason: string) => ({
  skip: true,
  result: { isValid: false, invalidReason: reason, payer: baseConfig.payer },
});

describe("the batch-settlement before-verify hook (libsecp256k1)", () => {
  it("accepts a voucher the payer authorizer signed for the running total plus the price", async () => {
    const answer = await asTheSdk({});
    expect(answer).toMatchObject({ skip: true, result: { isValid: true, payer: baseConfig.payer } });
  });

  it("refuses a voucher signed by another key, or whose signature is short or not hex", async () => {
    expect(await asTheSdk({ signature: (_, id, amount) => sign(otherKey, id, amount) })).toEqual(
      refusal(ErrInvalidVoucherSignature),
    );
    expect(await asTheSdk({ signature: (signature) => signature.slice(0, 130) })).toEqual(
      refusal(ErrInvalidVoucherSignature),
    );
    expect(await asTheSdk({ signature: () => `0x${"zz".repeat(65)}` })).toEqual(refusal(ErrInvalidVoucherSignature));
  });

  it("refuses a high-s twin of a good signature, and a v of 0 or 1, as the channel contract does (viem takes them)", async () => {
    const twin = await voucherCall({ signature: highS });
    expect((await run(ours, twin)).answer).toEqual(refusal(ErrInvalidVoucherSignature));
    expect((await run(sdk, twin)).answer).toMatchObject({ skip: true, result: { isValid: true } });
    const parity = await voucherCall({
      signature: (signature) => signature.slice(0, 130) + (signature.slice(130) === "1b" ? "00" : "01"),
    });
    expect((await run(ours, parity)).answer).toEqual(refusal(ErrInvalidVoucherSignature));
  });

  it("refuses a voucher for a channel id its config does not hash to, or one that is no channel id", async () => {
    const another = `0x${"2e".repeat(32)}`;
    expect(await asTheSdk({ channelId: () => another })).toMatchObject({ abort: true, reason: ErrChannelIdMismatch });
    expect(await asTheSdk({ channelId: (id) => id.slice(0, 64) })).toMatchObject({
      abort: true,
      reason: ErrInvalidChannelId,
    });
  });

  it("answers a voucher that does not follow the running total with the channel's state to resync from", async () => {
    expect(await asTheSdk({ amount: 5_999n })).toMatchObject({ abort: true, reason: ErrCumulativeAmountMismatch });
    expect(await asTheSdk({ amount: 7_000n, stored: null })).toBeUndefined();
    expect(await asTheSdk({ amount: 999n, stored: null })).toMatchObject({ reason: ErrCumulativeAmountMismatch });
  });

  it("leaves the facilitator to judge stale chain state and a payer's own signature", async () => {
    expect(await asTheSdk({ stored: { onchainSyncedAt: Date.now() - 3_600_000 } })).toBeUndefined();
    expect(await asTheSdk({ stored: { onchainSyncedAt: undefined } })).toBeUndefined();
    expect(await asTheSdk({ config: { payerAuthorizer: ZERO } })).toBeUndefined();
  });

  it("refuses what the channel's deposit and claims do not cover, and a config for another receiver", async () => {
    expect(await asTheSdk({ stored: { balance: "5999" } })).toEqual(refusal(ErrCumulativeExceedsBalance));
    expect(await asTheSdk({ stored: { totalClaimed: "6000" } })).toEqual(refusal(ErrCumulativeAmountBelowClaimed));
    expect(await asTheSdk({ config: { receiver: otherKey.address } })).toEqual(refusal(ErrReceiverMismatch));
  });

  it("refuses a config the SDK cannot hash (a bad checksum) every time, its channel id never remembered", async () => {
    const payer = payerKey.address.toLowerCase().replace(/[a-f]/, (letter) => letter.toUpperCase()) as Hex;
    for (const _ of [1, 2]) {
      expect(await asTheSdk({ config: { payer }, stored: null })).toMatchObject({
        abort: true,
        reason: ErrVerificationStateUnavailable,
      });
    }
  });

  it("hashes a voucher as viem's hashTypedData does, and refuses an amount that is no uint128 as it does", () => {
    for (const [network, chainId] of [
      ["eip155:137", 137],
      ["eip155:84532", 84532],
    ] as const) {
      for (const [amount, channelId] of [
        [0n, `0x${"c3".repeat(32)}`],
        [1_234_567n, `0x${"aB".repeat(32)}`],
        [2n ** 128n - 1n, `0x${"0f".repeat(32)}`],
      ] as const) {
        const domain = { ...BATCH_SETTLEMENT_DOMAIN, chainId, verifyingContract: BATCH_SETTLEMENT_ADDRESS };
        const message = { channelId, maxClaimableAmount: amount };
        expect(voucherDigest({ channelId, maxClaimableAmount: amount.toString() }, network)).toBe(
          hashTypedData({ domain, types: voucherTypes, primaryType: "Voucher", message }),
        );
      }
    }
    const channelId = `0x${"c3".repeat(32)}`;
    for (const amount of [2n ** 128n, -1n]) {
      expect(() => voucherDigest({ channelId, maxClaimableAmount: amount.toString() }, network.id)).toThrow();
      const domain = { ...BATCH_SETTLEMENT_DOMAIN, chainId: 137, verifyingContract: BATCH_SETTLEMENT_ADDRESS };
      const message = { channelId: channelId as Hex, maxClaimableAmount: amount };
      expect(() => hashTypedData({ domain, types: voucherTypes, primaryType: "Voucher", message })).toThrow();
    }
    expect(() => voucherDigest({ channelId, maxClaimableAmount: "1" }, "solana:mainnet")).toThrow();
  });
});

// x402 `batch-settlement` on the embedded EVM chain, with real pieces only: anvil with our channel contract, deposit
// collectors, Permit2 and EIP-3009/EIP-2612 USDC; the official client, server and facilitator schemes of @x402/evm.
// Balances and channel state are read from the chain. The tests run in order: each builds on the channels before.
import {
  BATCH_SETTLEMENT_ADDRESS,
  BATCH_SETTLEMENT_DOMAIN,
  ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
  PERMIT2_ADDRESS,
  claimBatchTypes,
  refundTypes,
  toClientEvmSigner,
  voucherTypes,
} from "@x402/evm";
import { computeChannelId, signVoucher } from "@x402/evm/batch-settlement/client";
import { hashTypedData, parseEventLogs, type Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getNetwork, type EvmNetwork } from "../../networks";
import {
  BatchPayer,
  WITHDRAW_DELAY,
  abiItemsMissing,
  approvePermit2,
  claimRow,
  revertOf,
  sdkBatchSettlementAbi,
  startBatchFixture,
  type BatchFixture,
  type BatchPayment,
} from "./batch-settlement-fixture";
import batchArtifact from "./contracts/x402-batch-settlement.artifact.json";
import erc3009CollectorArtifact from "./contracts/erc3009-deposit-collector.artifact.json";
import permit2CollectorArtifact from "./contracts/permit2-deposit-collector.artifact.json";
import { PAY_TO_ACCOUNT_INDEX, devAccount } from "./dev-accounts";
import { PERMIT2_DEPOSIT_COLLECTOR_ADDRESS, localBatchSettlementAbi } from "./local-chain";

const network = getNetwork("eip155:8453") as EvmNetwork;
const usdc = network.usdc.address;
const payTo = devAccount(PAY_TO_ACCOUNT_INDEX).address;
const stranger = devAccount(9).address;
/** 0.01 USDC a request; the client deposits the server's announced minimum, ten requests' worth. */
const PRICE = 10_000n;
const DEPOSIT = 100_000n;
const domain = { ...BATCH_SETTLEMENT_DOMAIN, chainId: network.chainId, verifyingContract: BATCH_SETTLEMENT_ADDRESS };
const code = (reason: string) => `invalid_batch_settlement_evm_${reason}`;

let fx: BatchFixture;
let payers: { a: BatchPayer; b: BatchPayer; c: BatchPayer };
/** What each payer signed last: a deposits with ERC-3009, b with Permit2 after an approval, c with an EIP-2612 permit. */
const last: Partial<Record<"a" | "b" | "c", BatchPayment>> = {};
let offers: Record<"eip3009" | "permit2" | "sponsored", Awaited<ReturnType<BatchFixture["paymentRequired"]>>>;

beforeAll(async () => {
  fx = await startBatchFixture(network);
  const payer = (index: number) => new BatchPayer(index, fx.publicClient, network);
  payers = { a: payer(2), b: payer(3), c: payer(4) };
  offers = {
    eip3009: await fx.paymentRequired(PRICE, "eip3009"),
    permit2: await fx.paymentRequired(PRICE, "permit2"),
    sponsored: await fx.paymentRequired(PRICE, "permit2", true),
  };
}, 60_000);
afterAll(() => fx?.stop());

const channel = (payment: BatchPayment | undefined) => fx.channel(payment!.voucher.channelId);
const manage = (payload: Record<string, unknown>) => fx.manage(payload, offers.eip3009.requirements);
/** The custom error a call of the channel contract by `from` reverts with. */
const onChain = (functionName: string, args: readonly unknown[], from: `0x${string}` = payTo) =>
  revertOf(fx.publicClient, from, BATCH_SETTLEMENT_ADDRESS, functionName, args);

describe("the embedded chain's batch-settlement contracts", () => {
  it("are our compiled contracts at the SDK's addresses, with every function and event the SDK uses", async () => {
    const codeAt = (address: `0x${string}`) => fx.publicClient.getCode({ address });
    expect(await codeAt(BATCH_SETTLEMENT_ADDRESS)).toBe(batchArtifact.runtimeBytecode);
    expect(await codeAt(ERC3009_DEPOSIT_COLLECTOR_ADDRESS)).toBe(erc3009CollectorArtifact.runtimeBytecode);
    expect(await codeAt(PERMIT2_DEPOSIT_COLLECTOR_ADDRESS)).toBe(permit2CollectorArtifact.runtimeBytecode);
    expect(abiItemsMissing(batchArtifact.abi, await sdkBatchSettlementAbi())).toEqual([]);
  });

  it("hash channel ids, vouchers, refunds and claim batches exactly as the SDK signs them", async () => {
    const [payer, salt] = [devAccount(2).address, `0x${"01".padStart(64, "0")}` as Hex];
    const config = { payer, payerAuthorizer: payer, receiver: payTo, receiverAuthorizer: fx.authorizer.address };
    const full = { ...config, token: usdc, withdrawDelay: WITHDRAW_DELAY, salt };
    const channelId = computeChannelId(full, network.id);
    expect(await fx.view("getChannelId", [full])).toBe(channelId);
    expect(await fx.view("getVoucherDigest", [channelId, 123n])).toBe(
      hashTypedData({
        domain,
        types: voucherTypes,
        primaryType: "Voucher",
        message: { channelId, maxClaimableAmount: 123n },
      }),
    );
    expect(await fx.view("getRefundDigest", [channelId, 7n, 5n])).toBe(
      hashTypedData({
        domain,
        types: refundTypes,
        primaryType: "Refund",
        message: { channelId, nonce: 7n, amount: 5n },
      }),
    );
    const rows = [1n, 2n].map((totalClaimed) => ({
      voucher: { channel: full, maxClaimableAmount: 9n },
      signature: "0x",
      totalClaimed,
    }));
    const claims = rows.map(({ totalClaimed }) => ({ channelId, maxClaimableAmount: 9n, totalClaimed }));
    expect(await fx.view("getClaimBatchDigest", [rows])).toBe(
      hashTypedData({ domain, types: claimBatchTypes, primaryType: "ClaimBatch", message: { claims } }),
    );
  });
});

describe("x402 batch-settlement through the official client and facilitator", () => {
  it("a deposit through the ERC-3009 collector lands exactly; the same authorization cannot land twice", async () => {
    const held = await fx.usdcOf(BATCH_SETTLEMENT_ADDRESS);
    const before = await fx.usdcOf(payers.a.account.address);
    const first = await payers.a.pay(fx.facilitator, offers.eip3009);
    expect(first.verified).toBe(true);
    expect(first.payment).toMatchObject({ type: "deposit", deposit: { amount: DEPOSIT.toString() } });
    expect(first.payment.deposit?.authorization.erc3009Authorization).toBeDefined();
    expect(first.settled).toMatchObject({ success: true, amount: DEPOSIT.toString() });
    expect(first.settled?.extra).toMatchObject({ channelState: { balance: DEPOSIT.toString(), totalClaimed: "0" } });
    expect(await channel(first.payment)).toEqual([DEPOSIT, 0n]);
    expect(await fx.usdcOf(payers.a.account.address)).toBe(before - DEPOSIT);
    expect(await fx.usdcOf(BATCH_SETTLEMENT_ADDRESS)).toBe(held + DEPOSIT);

    const again = await fx.facilitator.settle(first.payload, offers.eip3009.requirements);
    expect(again).toMatchObject({ success: false, errorReason: code("deposit_simulation_failed") });
    expect(await channel(first.payment)).toEqual([DEPOSIT, 0n]);
    // Two more requests on the deposit: vouchers for 20,000 and 30,000, and nothing on chain.
    for (const requests of [2n, 3n]) {
      const next = await payers.a.pay(fx.facilitator, offers.eip3009);
      expect(next).toMatchObject({ verified: true, payment: { type: "voucher" }, settled: undefined });
      expect(next.payment.voucher.maxClaimableAmount).toBe((requests * PRICE).toString());
      last.a = next.payment;
    }
    expect(await channel(last.a)).toEqual([DEPOSIT, 0n]);
  });

  it("deposits through the Permit2 collector land exactly, with an approval or with an EIP-2612 permit", async () => {
    const [b, c] = [payers.b.account, payers.c.account];
    await approvePermit2(fx, b);
    const [beforeB, beforeC] = await Promise.all([fx.usdcOf(b.address), fx.usdcOf(c.address)]);
    const approved = await payers.b.pay(fx.facilitator, offers.permit2);
    const permit2 = approved.payment.deposit?.authorization.permit2Authorization;
    expect(permit2).toMatchObject({ spender: PERMIT2_DEPOSIT_COLLECTOR_ADDRESS });
    expect(approved.settled).toMatchObject({ success: true, amount: DEPOSIT.toString() });
    expect(await channel(approved.payment)).toEqual([DEPOSIT, 0n]);
    expect(await fx.usdcOf(b.address)).toBe(beforeB - DEPOSIT);
    last.b = (await payers.b.pay(fx.facilitator, offers.permit2)).payment;
    expect(last.b.voucher.maxClaimableAmount).toBe((2n * PRICE).toString());

    const permitted = await payers.c.pay(fx.facilitator, offers.sponsored);
    expect(permitted.payload.extensions?.eip2612GasSponsoring).toMatchObject({ info: { spender: PERMIT2_ADDRESS } });
    expect(permitted.settled).toMatchObject({ success: true, amount: DEPOSIT.toString() });
    expect(await channel(permitted.payment)).toEqual([DEPOSIT, 0n]);
    expect(await fx.usdcOf(c.address)).toBe(beforeC - DEPOSIT);
    last.c = permitted.payment;
  });

  it("vouchers of three channels are claimed in one transaction, then settled to the receiver", async () => {
    const [claimedBefore, settledBefore] = await fx.receiver();
    const rows = [claimRow(last.a!, 3n * PRICE), claimRow(last.b!, 2n * PRICE), claimRow(last.c!, PRICE)];
    const claimed = await manage({ type: "claim", claims: rows });
    expect(claimed).toMatchObject({ success: true });
    const receipt = await fx.publicClient.getTransactionReceipt({ hash: claimed.transaction as Hex });
    const events = parseEventLogs({ abi: localBatchSettlementAbi, logs: receipt.logs, eventName: "Claimed" });
    expect(events.map(({ args }) => (args as { claimAmount: bigint }).claimAmount)).toEqual(
      [3n, 2n, 1n].map((n) => n * PRICE),
    );
    expect(await fx.receiver()).toEqual([claimedBefore! + 6n * PRICE, settledBefore]);
    expect(await Promise.all([last.a, last.b, last.c].map(channel))).toEqual(
      [3n, 2n, 1n].map((requests) => [DEPOSIT, requests * PRICE]),
    );
    // The same batch again is already applied: it lands, and changes nothing.
    expect(await manage({ type: "claim", claims: rows })).toMatchObject({ success: true });
    expect(await fx.receiver()).toEqual([claimedBefore! + 6n * PRICE, settledBefore]);

    const payToBefore = await fx.usdcOf(payTo);
    const settled = await manage({ type: "settle", receiver: payTo, token: usdc });
    expect(settled).toMatchObject({ success: true, amount: (6n * PRICE).toString() });
    expect(await fx.usdcOf(payTo)).toBe(payToBefore + 6n * PRICE);
    expect(await fx.receiver()).toEqual([claimedBefore! + 6n * PRICE, settledBefore! + 6n * PRICE]);
    expect(await manage({ type: "settle", receiver: payTo, token: usdc })).toMatchObject({
      success: false,
      errorReason: code("nothing_to_settle"),
    });
  });

  it("refuses a replayed or lower voucher, and one signed by another key, off chain and on chain", async () => {
    const { requirements } = offers.eip3009;
    const verify = (payment: BatchPayment) =>
      fx.facilitator.verify({ x402Version: 2, accepted: requirements, payload: { ...payment } }, requirements);
    const signedBy = async (account: BatchFixture["authorizer"], amount: bigint) => ({
      ...last.a!,
      voucher: await signVoucher(toClientEvmSigner(account), last.a!.voucher.channelId, amount.toString(), network.id),
    });
    // 30,000 is claimed: the voucher for 30,000 (replayed) and one for less are below it.
    expect(await verify(last.a!)).toMatchObject({ isValid: false, invalidReason: code("cumulative_below_claimed") });
    const lower = await signedBy(payers.a.account, 2n * PRICE);
    expect(await verify(lower)).toMatchObject({ isValid: false, invalidReason: code("cumulative_below_claimed") });
    const forged = await signedBy(privateKeyToAccount(devAccount(5).privateKey), 4n * PRICE);
    expect(await verify(forged)).toMatchObject({ isValid: false, invalidReason: code("voucher_signature") });

    const before = await fx.receiver();
    expect(await manage({ type: "claim", claims: [claimRow(forged, 4n * PRICE)] })).toMatchObject({
      success: false,
      errorReason: code("claim_simulation_failed"),
    });
    expect(await onChain("claim", [[claimRow(forged, 4n * PRICE, true)]])).toBe("InvalidSignature");
    expect(await onChain("claim", [[claimRow(last.a!, 4n * PRICE, true)]])).toBe("ClaimExceedsCeiling");
    expect(await onChain("claim", [[claimRow(last.a!, 3n * PRICE, true)]], stranger)).toBe("NotAuthorizedToClaim");
    // Relayed (by anyone), a batch needs the receiver authorizer's signature, then each voucher its payer's.
    const relay = async (payment: BatchPayment, totalClaimed: bigint, signer: BatchFixture["authorizer"]) => {
      const { channelId, maxClaimableAmount } = payment.voucher;
      const claims = [{ channelId, maxClaimableAmount: BigInt(maxClaimableAmount), totalClaimed }];
      const typed = { domain, types: claimBatchTypes, primaryType: "ClaimBatch" } as const;
      const signature = await signer.signTypedData({ ...typed, message: { claims } });
      return onChain("claimWithSignature", [[claimRow(payment, totalClaimed, true)], signature], stranger);
    };
    expect(await relay(last.a!, 3n * PRICE, fx.authorizer)).toBe("no revert"); // already applied: a no-op
    expect(await relay(last.a!, 3n * PRICE, payers.b.account)).toBe("InvalidSignature");
    expect(await relay(forged, 4n * PRICE, fx.authorizer)).toBe("InvalidSignature");
    expect(await fx.receiver()).toEqual(before);
  });

  it("a cooperative refund claims the last voucher and returns exactly the unclaimed deposit, in one transaction", async () => {
    const fourth = await payers.a.pay(fx.facilitator, offers.eip3009);
    expect(fourth.verified).toBe(true);
    expect(fourth.payment.voucher.maxClaimableAmount).toBe((4n * PRICE).toString());
    last.a = fourth.payment;
    const { channelConfig, voucher } = last.a;
    const rest = DEPOSIT - 4n * PRICE;
    const refund = { type: "refund", channelConfig, voucher, amount: rest.toString(), refundNonce: "0" };
    const payload = { ...refund, claims: [claimRow(last.a, 4n * PRICE)] };
    const { requirements } = offers.eip3009;
    const verified = await fx.facilitator.verify({ x402Version: 2, accepted: requirements, payload }, requirements);
    expect(verified.isValid).toBe(true);
    const [[claimedBefore], payerBefore] = await Promise.all([fx.receiver(), fx.usdcOf(payers.a.account.address)]);
    const refunded = await manage(payload);
    expect(refunded).toMatchObject({ success: true, amount: rest.toString() });
    expect(refunded.extra).toMatchObject({
      channelState: { balance: "40000", totalClaimed: "40000", refundNonce: "1" },
    });
    expect(await fx.usdcOf(payers.a.account.address)).toBe(payerBefore + rest);
    expect(await channel(last.a)).toEqual([4n * PRICE, 4n * PRICE]);
    expect(await fx.view("refundNonce", [voucher.channelId])).toBe(1n);
    expect((await fx.receiver())[0]).toBe(claimedBefore! + PRICE);
    const receipt = await fx.publicClient.getTransactionReceipt({ hash: refunded.transaction as Hex });
    const names = parseEventLogs({ abi: localBatchSettlementAbi, logs: receipt.logs }).map((log) => log.eventName);
    expect(names).toEqual(["Claimed", "Refunded"]);

    // Nothing is left to refund; a refund signed for the used nonce is refused by the contract.
    expect(await manage({ ...refund, refundNonce: "1", amount: "1", claims: [] })).toMatchObject({
      success: false,
      errorReason: code("refund_no_balance"),
    });
    expect(await onChain("refundWithSignature", [channelConfig, 1n, 0n, "0x"], stranger)).toBe("InvalidRefundNonce");
    const swept = await manage({ type: "settle", receiver: payTo, token: usdc });
    expect(swept).toMatchObject({ success: true, amount: "10000" });
  });

  it("a timed withdrawal, finalized after the delay, returns what the receiver had not claimed by then", async () => {
    const b = payers.b.account;
    const config = last.b!.channelConfig;
    await fx.send(b, "initiateWithdraw", [config, DEPOSIT - 2n * PRICE]);
    const [, initiatedAt] = (await fx.view("pendingWithdrawals", [last.b!.voucher.channelId])) as number[];
    expect(initiatedAt).toBeGreaterThan(0);
    // During the delay the payer keeps paying, the facilitator reports the withdrawal, and the receiver claims.
    const third = await payers.b.pay(fx.facilitator, offers.permit2);
    expect(third.verified).toBe(true);
    const verified = await fx.facilitator.verify(third.payload, offers.permit2.requirements);
    expect(verified.extra).toMatchObject({ withdrawRequestedAt: initiatedAt });
    const claimed = await manage({ type: "claim", claims: [claimRow(third.payment, 3n * PRICE)] });
    expect(claimed.success).toBe(true);

    expect(await onChain("finalizeWithdraw", [config], b.address)).toBe("WithdrawDelayNotElapsed");
    await fx.testClient.increaseTime({ seconds: WITHDRAW_DELAY });
    await fx.testClient.mine({ blocks: 1 });
    expect(await onChain("finalizeWithdraw", [config], stranger)).toBe("NotAuthorizedToWithdraw");
    const before = await fx.usdcOf(b.address);
    await fx.send(b, "finalizeWithdraw", [config]);
    // Asked for 80,000; 30,000 of the 100,000 is claimed by now, so 70,000 comes back.
    expect(await fx.usdcOf(b.address)).toBe(before + DEPOSIT - 3n * PRICE);
    expect(await channel(last.b)).toEqual([3n * PRICE, 3n * PRICE]);
    expect(await fx.view("pendingWithdrawals", [last.b!.voucher.channelId])).toEqual([0n, 0]);
    // What the contract holds is the channels' balances less what it sent the receiver.
    const [, settled] = await fx.receiver();
    const balances = await Promise.all([last.a, last.b, last.c].map(channel));
    const total = balances.reduce((sum, [balance]) => sum + balance!, 0n);
    expect(await fx.usdcOf(BATCH_SETTLEMENT_ADDRESS)).toBe(total - settled!);
  });
});

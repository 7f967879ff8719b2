// The part of a voucher call that the protocol's own check costs: the signature of one batch-settlement voucher,
// verified as @x402/evm's server scheme verifies it (viem's verifyTypedData: EIP-712 hashing and secp256k1
// public-key recovery, in JavaScript), and as our own before-verify hook verifies it on every call instead
// (server/payment/voucher-check.ts: libsecp256k1), in a loop in this process. Warm code, no HTTP, no database.
import { BATCH_SETTLEMENT_ADDRESS, BATCH_SETTLEMENT_DOMAIN, voucherTypes } from "@x402/evm";
import { verifyTypedData } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { signedBy } from "../../server/payment/voucher-check";

/**
 * Wall time per voucher signature check, in ms, over `checks` checks after as many to warm up: the SDK's (`sdk`) and
 * ours (`ours`), the same voucher.
 */
export async function voucherCheckMs(checks: number, chainId: number): Promise<{ sdk: number; ours: number }> {
  const account = privateKeyToAccount(generatePrivateKey());
  const domain = { ...BATCH_SETTLEMENT_DOMAIN, chainId, verifyingContract: BATCH_SETTLEMENT_ADDRESS };
  const message = { channelId: `0x${"ab".repeat(32)}` as const, maxClaimableAmount: 1_234_567n };
  const signature = await account.signTypedData({ domain, types: voucherTypes, primaryType: "Voucher", message });
  const check = async () => {
    const valid = await verifyTypedData({
      address: account.address,
      domain,
      types: voucherTypes,
      primaryType: "Voucher",
      message,
      signature,
    });
    if (!valid) throw new Error("voucher floor: a good signature did not verify");
  };
  const voucher = {
    channelId: message.channelId,
    maxClaimableAmount: message.maxClaimableAmount.toString(),
    signature,
  };
  const ours = () => {
    if (!signedBy(account.address, voucher, `eip155:${chainId}`)) {
      throw new Error("voucher floor: a good signature did not verify (ours)");
    }
  };
  const timed = async (run: () => unknown) => {
    for (let index = 0; index < checks; index++) await run();
    const started = performance.now();
    for (let index = 0; index < checks; index++) await run();
    return (performance.now() - started) / checks;
  };
  return { sdk: await timed(check), ours: await timed(ours) };
}

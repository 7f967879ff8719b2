// The part of a voucher call that the protocol's own check costs: the signature of one batch-settlement voucher,
// verified as @x402/evm's server scheme verifies it on every call (viem's verifyTypedData: EIP-712 hashing and
// secp256k1 public-key recovery, in JavaScript), in a loop in this process. Warm code, no HTTP, no database: a floor
// under a voucher call's figure, which no change of ours in the request path lowers.
import { BATCH_SETTLEMENT_ADDRESS, BATCH_SETTLEMENT_DOMAIN, voucherTypes } from "@x402/evm";
import { verifyTypedData } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";

/** Wall time per voucher signature check, in ms, over `checks` checks after as many to warm up. */
export async function voucherCheckMs(checks: number, chainId: number): Promise<number> {
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
  for (let index = 0; index < checks; index++) await check();
  const started = performance.now();
  for (let index = 0; index < checks; index++) await check();
  return (performance.now() - started) / checks;
}

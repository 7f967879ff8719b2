import { x402Client } from "@x402/core/client";
import { toClientEvmSigner } from "@x402/evm";
import { BatchSettlementEvmScheme } from "@x402/evm/batch-settlement/client";
import { createPublicClient, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { stack } from "./payments";

/**
 * The official client paying from a batch-settlement channel where a 402 offers one, depositing `deposit` (1 USDC)
 * when it opens the channel or runs short, as an agent that means to make many calls does; `salt` opens another
 * channel of the same payer.
 */
export function channelClient(privateKey: `0x${string}`, options: { deposit?: bigint; salt?: `0x${string}` } = {}) {
  const account = privateKeyToAccount(privateKey);
  const signer = toClientEvmSigner(account, createPublicClient({ transport: http(stack().chainRpcUrl) }));
  const deposit = options.deposit ?? 1_000_000n;
  const scheme = new BatchSettlementEvmScheme(signer, { depositStrategy: () => deposit, salt: options.salt });
  const client = new x402Client(
    (_version, accepts) => accepts.find((entry) => entry.scheme === "batch-settlement") ?? accepts[0]!,
  ).register("eip155:*", scheme);
  return { scheme, client };
}

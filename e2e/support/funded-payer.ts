import { createPublicClient, createTestClient, createWalletClient, http, type Abi } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { polygon as polygonChain } from "viem/chains";
import { localUsdcAbi } from "../../cli/dev-stack/local-chain";
import { polygon, stack } from "./payments";

/**
 * A new payer on the embedded chain holding `amount` of USDC (from the last development payer) and some gas, with a
 * way to move all of its USDC away (and back): for payments whose funds are gone by the time they settle, or to fund
 * an address that has no key.
 */
export async function fundedPayer(amount: bigint) {
  const key = generatePrivateKey();
  const account = privateKeyToAccount(key);
  const transport = http(stack().chainRpcUrl);
  await createTestClient({ mode: "anvil", transport }).setBalance({ address: account.address, value: 10n ** 18n });
  const chain = { ...polygonChain, rpcUrls: { default: { http: [stack().chainRpcUrl] } } };
  const bank = stack().payers[7]!;
  const send = async (from: `0x${string}`, to: `0x${string}`, value: bigint) => {
    const wallet = createWalletClient({ account: privateKeyToAccount(from), chain, transport });
    const hash = await wallet.writeContract({
      address: polygon.usdc.address,
      abi: localUsdcAbi as Abi,
      functionName: "transfer",
      args: [to, value],
    });
    await createPublicClient({ transport }).waitForTransactionReceipt({ hash });
  };
  await send(bank.privateKey, account.address, amount);
  return {
    key,
    address: account.address,
    /** All its USDC, to the bank it came from or to `to`. */
    drain: (to: `0x${string}` = bank.address) => send(key, to, amount),
    refund: () => send(bank.privateKey, account.address, amount),
  };
}

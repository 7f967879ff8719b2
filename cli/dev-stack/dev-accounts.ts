import { mnemonicToAccount } from "viem/accounts";
import { bytesToHex } from "viem";
import type { NetworkDefinition } from "../../networks";
import { solanaDevAccount } from "./solana-dev-accounts";

/** The standard development mnemonic of anvil and hardhat: its keys are public, and worthless off a local chain. */
export const DEV_MNEMONIC = "test test test test test test test test test test test junk";

export const FACILITATOR_ACCOUNT_INDEX = 0;
export const PAY_TO_ACCOUNT_INDEX = 1;
export const PAYER_ACCOUNT_INDEXES = [2, 3, 4, 5, 6, 7, 8, 9] as const;
/** The key that signs the embedded deployment's channel claims and refunds (it sends no transaction). */
export const CHANNEL_AUTHORIZER_ACCOUNT_INDEX = 10;
/** Local USDC each payer holds at start: 10,000 USDC in atomic units. */
export const PAYER_STARTING_BALANCE = 10_000n * 10n ** 6n;

export interface DevAccount {
  index: number;
  address: `0x${string}`;
  privateKey: `0x${string}`;
}

export function devAccount(index: number): DevAccount {
  const account = mnemonicToAccount(DEV_MNEMONIC, { addressIndex: index });
  const privateKey = account.getHdKey().privateKey;
  if (!privateKey) throw new Error(`no private key derived for account ${index}`);
  return { index, address: account.address, privateKey: bytesToHex(privateKey) };
}

export interface DevKey {
  address: string;
  /** EVM: 0x-hex private key. Solana: base58 64-byte keypair. */
  privateKey: string;
}

/** The development accounts of the embedded chain of `network`: facilitator, pay-to, and the funded payers. */
export async function devAccountsFor(
  network: NetworkDefinition,
): Promise<{ facilitator: DevKey; payTo: DevKey; payers: DevKey[] }> {
  const account = async (index: number): Promise<DevKey> => {
    const { address, privateKey } = network.kind === "evm" ? devAccount(index) : await solanaDevAccount(index);
    return { address, privateKey };
  };
  return {
    facilitator: await account(FACILITATOR_ACCOUNT_INDEX),
    payTo: await account(PAY_TO_ACCOUNT_INDEX),
    payers: await Promise.all(PAYER_ACCOUNT_INDEXES.map(account)),
  };
}

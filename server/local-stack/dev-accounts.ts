import { mnemonicToAccount } from "viem/accounts";
import { bytesToHex } from "viem";

/** The standard development mnemonic of anvil and hardhat: its keys are public, and worthless off a local chain. */
export const DEV_MNEMONIC = "test test test test test test test test test test test junk";

export const FACILITATOR_ACCOUNT_INDEX = 0;
export const PAY_TO_ACCOUNT_INDEX = 1;
export const PAYER_ACCOUNT_INDEXES = [2, 3, 4, 5, 6, 7, 8, 9] as const;
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

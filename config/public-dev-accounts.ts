import { createPrivateKey, createPublicKey } from "node:crypto";
import { getBase58Decoder, getBase58Encoder } from "@solana/kit";
import { privateKeyToAccount } from "viem/accounts";
import { sameAddress } from "../networks";

/**
 * Accounts whose private keys are public: production (`paysvc start`) refuses them as the pay-to and as the
 * facilitator's key, since anyone could take what is paid to them or spend their gas. They are the development
 * world's accounts (cli/dev-stack), written out here because production code does not load the dev stack;
 * config/public-dev-accounts.test.ts checks that every account the dev stack uses is on the list.
 */

/**
 * The first 10 accounts of anvil's and hardhat's public mnemonic
 * "test test test test test test test test test test test junk".
 */
const EVM_DEVELOPMENT_ACCOUNTS = [
  "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266",
  "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
  "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
  "0x90F79bf6EB2c4f870365E785982E1f101E93b906",
  "0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65",
  "0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc",
  "0x976EA74026E726554dB657fA54763abd0C3a0aa9",
  "0x14dC79964da2C08b23698B3D3cc7Ca32193d9955",
  "0x23618e81E3f5cdF7f54C3d65f7FBc0aBf5B21E8f",
  "0xa0Ee7A142d267C1f36714E4a8F75612F20a79720",
] as const;

/** Keypairs 0 to 9 of the embedded Solana validator, derived from a public phrase (solana-dev-accounts.ts). */
const SOLANA_DEVELOPMENT_ACCOUNTS = [
  "5K9ETe4S1L4x3rtW9E4XLBCQvqzAQN91WwHeLRBTwgNG",
  "54R8Q24jSGPFUXDGczHzseftYug7EEKek53x1ATdYqjF",
  "EEAu7rrHDZFCNechRVarUsNt6rZ3Kt1xo16VEDjvtx35",
  "E9gt54xj2fYfK1uUVtytpdcBDywAVzEzf6ZVTe9mGkDg",
  "HMsJU3DpSWijowvuZR4h4RiVxJVhZ1xs4LmCQ5zpGmA",
  "H1tjkCV2spGmrFV9tuc5CXFtWxXGV64zUKCurDe2oyYj",
  "5MM9dk1qa5bdMAmPUQY9cqegmeA1zvvkBCnNYEULAnBz",
  "6J9tTSTNucFmfRCgvEm92ACPVfap4ZtsGYgUXNCDd1Xi",
  "9291aEA6RbZtpbDHG63YFYm9L5JPNCyHGyfTagYWvNaY",
  "H66GVAj9jnNjVrDX9LYqkAdhN9LcJWUESrFA799HaE51",
] as const;

export const PUBLIC_DEVELOPMENT_ADDRESSES: readonly string[] = [
  ...EVM_DEVELOPMENT_ACCOUNTS,
  ...SOLANA_DEVELOPMENT_ACCOUNTS,
];

/** What a listed address is, for the message; undefined for any other address. */
function describe(address: string): string | undefined {
  const evm = EVM_DEVELOPMENT_ACCOUNTS.findIndex((listed) => sameAddress(listed, address));
  if (evm >= 0) return `account ${evm} of the public development mnemonic "test test ... junk"`;
  const solana = SOLANA_DEVELOPMENT_ACCOUNTS.findIndex((listed) => listed === address);
  if (solana >= 0) return `development keypair ${solana} of paysvc's embedded Solana validator`;
  return undefined;
}

/** The DER prefix of a PKCS#8 Ed25519 private key, before its 32-byte seed. */
const ED25519_PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");

/** The Solana addresses a 64-byte keypair stands for: the one its seed derives, and the one it says it has. */
function solanaAddressesOf(keypair: Uint8Array): string[] {
  const seed = Buffer.from(keypair.subarray(0, 32));
  const privateKey = createPrivateKey({
    key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]),
    format: "der",
    type: "pkcs8",
  });
  const publicKey = createPublicKey(privateKey).export({ format: "der", type: "spki" }).subarray(-32);
  const decoder = getBase58Decoder();
  return [decoder.decode(publicKey), decoder.decode(keypair.subarray(32))];
}

/** The addresses a well-formed key (0x-hex on EVM, a base58 64-byte keypair on Solana) signs for. */
function addressesOfKey(key: string): string[] {
  if (/^0x[0-9a-fA-F]{64}$/.test(key)) return [privateKeyToAccount(key as `0x${string}`).address];
  if (!/^[1-9A-HJ-NP-Za-km-z]+$/.test(key)) return [];
  const keypair = getBase58Encoder().encode(key);
  return keypair.length === 64 ? solanaAddressesOf(new Uint8Array(keypair)) : [];
}

/** Why `variable`'s address may not be used in production, or undefined. */
export function publicAddressProblem(variable: string, address: string): string | undefined {
  const what = describe(address);
  return what
    ? `${variable}: ${address} is ${what}, whose private key is public: anyone could take what is paid to it; set an address of your own`
    : undefined;
}

/** Why `variable`'s private key may not be used in production, or undefined; the key itself is never named. */
export function publicKeyProblem(variable: string, key: string): string | undefined {
  for (const address of addressesOfKey(key)) {
    const what = describe(address);
    if (what) {
      return `${variable}: is the key of ${what} (${address}), which is public: anyone could spend from it; set a key of your own`;
    }
  }
  return undefined;
}

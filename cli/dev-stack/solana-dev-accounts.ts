import { createHash } from "node:crypto";
import {
  createKeyPairSignerFromPrivateKeyBytes,
  getAddressEncoder,
  getBase58Decoder,
  type KeyPairSigner,
} from "@solana/kit";

export interface SolanaDevAccount {
  index: number;
  address: string;
  /** The 64-byte keypair (seed, then public key) in base58, the form wallets export and import. */
  privateKey: string;
  signer: KeyPairSigner;
}

/**
 * Development keypair `index` of the embedded Solana validator, derived from a public phrase like anvil's
 * mnemonic: the keys are public, and worthless off the local validator. Indexes mean what they mean on EVM
 * (0 facilitator fee payer, 1 pay-to, 2 to 9 funded payers).
 */
export async function solanaDevAccount(index: number): Promise<SolanaDevAccount> {
  const seed = createHash("sha256").update(`paysvc development solana account ${index}`).digest();
  const signer = await createKeyPairSignerFromPrivateKeyBytes(new Uint8Array(seed));
  const keypair = new Uint8Array(64);
  keypair.set(seed, 0);
  keypair.set(getAddressEncoder().encode(signer.address), 32);
  return { index, address: signer.address, privateKey: getBase58Decoder().decode(keypair), signer };
}

import { getBase58Encoder, isAddress as isSolanaAddress } from "@solana/kit";
import { isAddress as isEvmAddress } from "viem";
import type { NetworkDefinition } from "./network";

/**
 * Why `value` is not an account address on `network`, or undefined when it is one. Without a network (it is
 * itself invalid), an address of either kind is accepted, so that every other problem can still be reported.
 */
export function addressProblem(network: NetworkDefinition | undefined, value: string): string | undefined {
  if (!network) {
    return isEvmAddress(value, { strict: true }) || isSolanaAddress(value)
      ? undefined
      : "must be an EVM address (0x and 40 hex digits, with a valid EIP-55 checksum when mixed-case) or a Solana address (base58)";
  }
  if (network.kind === "evm") {
    return isEvmAddress(value, { strict: true })
      ? undefined
      : `must be an EVM address on ${network.id}: 0x and 40 hex digits, with a valid EIP-55 checksum when mixed-case`;
  }
  return isSolanaAddress(value)
    ? undefined
    : `must be a Solana address on ${network.id}: 32 bytes in base58 (32 to 44 characters, no 0, O, I or l)`;
}

/** Why `value` is not a signing key on `network`, or undefined when it is one. */
export function privateKeyProblem(network: NetworkDefinition, value: string): string | undefined {
  if (network.kind === "evm") {
    return /^0x[0-9a-fA-F]{64}$/.test(value) ? undefined : "must be a 32-byte hex private key (0x + 64 hex digits)";
  }
  const problem = "must be a 64-byte Solana keypair in base58, as wallets export it";
  if (!/^[1-9A-HJ-NP-Za-km-z]+$/.test(value)) return problem;
  return getBase58Encoder().encode(value).length === 64 ? undefined : problem;
}

/** Whether two addresses name the same account: hex (EVM) addresses ignore case, base58 (Solana) ones do not. */
export function sameAddress(a: string, b: string): boolean {
  const hex = /^0x[0-9a-f]*$/i;
  return hex.test(a) && hex.test(b) ? a.toLowerCase() === b.toLowerCase() : a === b;
}

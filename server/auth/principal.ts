/**
 * Who a request acts as, for the endpoints that need one: a prepaid key (its bearer code), a wallet that signed in
 * (SIGN-IN-WITH-X, wallet-sign-in.ts), or the operator (its session cookie, operator/operator-session.ts).
 */
export type Principal =
  { kind: "key"; code: string } | { kind: "wallet"; address: string; chainId: string } | { kind: "operator" };

export type WalletPrincipal = Extract<Principal, { kind: "wallet" }>;
export type KeyPrincipal = Extract<Principal, { kind: "key" }>;

/**
 * A wallet's address as keys record their owner: lower-case hex on EVM networks (addresses are case-insensitive
 * there; checksums differ only in case), as written on Solana (base58 is case-sensitive).
 */
export function walletOwner(address: string): string {
  return address.startsWith("0x") ? address.toLowerCase() : address;
}

import type { PaymentScheme } from "./payment-scheme";
import { acceptSigned } from "./accept-signed";

/**
 * x402 `exact`: the payer signs a transfer of the price (EIP-3009 on EVM, a partially signed transaction on
 * Solana); it is settled whole after the work, or, for a stream in overlap order, while the stream is passed on.
 * Offered for every paid call, first in the 402, and the only scheme of x402 v1.
 */
export const exactScheme: PaymentScheme = {
  name: "exact",
  chargesUse: false,
  offer: async (gateway, _call, amount) => ({ requirements: await gateway.requirementsFor(amount) }),
  accept: (acceptance) => acceptSigned(exactScheme, acceptance),
};

import type { PaymentScheme } from "./payment-scheme";
import { acceptSigned } from "./accept-signed";

/**
 * x402 `upto`: the payer signs a Permit2 transfer of at most the price, and is charged the tokens the answer used
 * (a stream on its usage event, as it passes). Offered for calls billed in tokens (every dialect's) on EVM networks,
 * where the deployment offers it and the facilitator that serves the 402 lists it.
 */
export const uptoScheme: PaymentScheme = {
  name: "upto",
  chargesUse: true,
  offer: async (gateway, call, amount) =>
    call.usage && call.quote.tokens ? gateway.uptoRequirementsFor(amount) : undefined,
  accept: (acceptance) => acceptSigned(uptoScheme, acceptance),
};

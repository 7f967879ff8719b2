/**
 * What the page says when a purchase in the browser does not go through: one sentence each, written for the person
 * holding the wallet, always saying whether anything was charged.
 */
import type { EvmPurchaseNetwork } from "../../server/console/wallet-purchase";

const NOTHING = "Nothing was charged.";

const chainName = (network: EvmPurchaseNetwork) => `${network.name} (chain id ${network.chainId})`;

export const sentences = {
  noWallet: () =>
    `No browser wallet was found on this page. Install a wallet extension for EVM networks (MetaMask, Rabby, Coinbase Wallet or another), reload the page and try again. ${NOTHING}`,
  connectDeclined: () => `The wallet did not connect: the request was declined. ${NOTHING}`,
  requestPending: () =>
    `Your wallet already has a request waiting. Open the wallet, answer or close it, then try again. ${NOTHING}`,
  connectFailed: (message: string) => `The wallet could not connect (${message}). ${NOTHING}`,
  wrongNetwork: (network: EvmPurchaseNetwork, refused: boolean, chainId: number | undefined, problem?: string) => {
    const where = chainId === undefined ? "another network" : `chain id ${chainId}`;
    const why = refused ? "the switch was refused" : `the switch did not happen${problem ? ` (${problem})` : ""}`;
    return `Your wallet is still on ${where}: ${why}. Buying needs the wallet on ${chainName(network)}; switch it there and try again. ${NOTHING}`;
  },
  movedOffNetwork: (network: EvmPurchaseNetwork) =>
    `Your wallet left ${chainName(network)} before signing. Switch it back and try again. ${NOTHING}`,
  notEnoughUsdc: (network: EvmPurchaseNetwork, account: string, balance: string, price: string, missing: string) =>
    `Not enough USDC: this wallet (${account}) holds ${balance} USDC on ${network.name} and the pack costs ${price} USDC. Add at least ${missing} USDC to it and try again. ${NOTHING}`,
  rejected: () => `You rejected the signature in your wallet, so no key was bought. ${NOTHING}`,
  signingFailed: (message: string) => `Your wallet could not sign the payment (${message}). ${NOTHING}`,
  priceChanged: () => `The price changed before you signed, so nothing was signed. Ask the price again. ${NOTHING}`,
  paymentRefused: (message: string | undefined) =>
    `The service refused the signed payment${message ? `: ${message}` : ""}. No key was issued and the payment was not collected. ${NOTHING}`,
  issueFailed: (status: number, message: string | undefined) =>
    `The service could not issue the key (${status}${message ? `: ${message}` : ""}). The payment was not collected. ${NOTHING} Try again in a moment.`,
  quoteRefused: (status: number, message: string | undefined) =>
    status === 503
      ? `The prepaid key issuer is unavailable right now. ${NOTHING} Try again in a moment.`
      : `The service did not give a price for this pack (${status}${message ? `: ${message}` : ""}). ${NOTHING}`,
  unreachable: () => `The service could not be reached. Check your connection and try again. ${NOTHING}`,
  unreachableAfterSigning: () =>
    "The service could not be reached after you signed. A signed payment is collected only together with the key it buys: if your USDC balance did not fall, nothing was charged; if it fell, the key was issued but not received, so keep your wallet address and contact the operator.",
};

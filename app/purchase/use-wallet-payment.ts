"use client";

import { useState } from "react";
import type { EvmPurchaseNetwork } from "../../server/console/wallet-purchase";
import { atomicToDecimal } from "../../server/core/money";
import {
  messageOf,
  requestAccount,
  switchWalletTo,
  walletChainId,
  walletErrorCode,
  WalletErrorCode,
  walletsNow,
  type BrowserWallet,
} from "./browser-wallet";
import { sentences } from "./purchase-sentences";
import { buyPack, quotePack, usdcBalanceOf, type PackQuote, type PackRequest } from "./wallet-payment";

/** Where a payment with the browser wallet stands. */
export type PaymentStep =
  | { step: "choose" }
  | { step: "working"; doing: string }
  | { step: "pick-wallet"; wallets: BrowserWallet[] }
  | { step: "confirm"; wallet: BrowserWallet; account: `0x${string}`; quote: PackQuote; balance: bigint | undefined };

export interface WalletPaymentOptions<Answer> {
  network: EvmPurchaseNetwork;
  /** Where the request is paid for (a purchase's path, a top-up's). */
  path: string;
  request: PackRequest;
  /** The wallets the page has heard announced (EIP-6963); window.ethereum when none. */
  wallets: () => BrowserWallet[];
  /** Why `account` may not pay for this request, if it may not (a top-up: it is not the key's owner). */
  refuseAccount?: (account: `0x${string}`, walletName: string) => string | undefined;
  /** What the page says when the signature is rejected, and when the service cannot do what was paid for. */
  rejected: () => string;
  failed: (status: number, message: string | undefined) => string;
  /** The service did it and took the payment: its answer, what was paid, the settlement's transaction. */
  onPaid: (answer: Answer, paid: bigint, transaction: string | undefined) => void;
}

/**
 * Paying for a request with the visitor's browser wallet, as the purchase form and a key's top-up both do: find the
 * wallet (a choice when there are several), connect it, move it to the deployment's network, ask the exact price
 * (the 402), show it with the wallet's USDC, then sign one authorization through the official x402 client
 * (wallet-payment.ts). Every way it can stop is one sentence that says whether anything was charged.
 */
export function useWalletPayment<Answer>(options: WalletPaymentOptions<Answer>) {
  const { network } = options;
  const [step, setStep] = useState<PaymentStep>({ step: "choose" });
  const [failure, setFailure] = useState<string>();
  const usd = (amount: bigint) => atomicToDecimal(amount, network.usdc.decimals);

  const fail = (sentence: string, next: PaymentStep = { step: "choose" }) => {
    setFailure(sentence);
    setStep(next);
  };

  function start() {
    setFailure(undefined);
    const found = walletsNow(options.wallets);
    if (found.length === 0) return fail(sentences.noWallet());
    if (found.length > 1) return setStep({ step: "pick-wallet", wallets: found });
    void connect(found[0]!);
  }

  async function connect(wallet: BrowserWallet) {
    setFailure(undefined);
    setStep({ step: "working", doing: `Waiting for ${wallet.name} to connect…` });
    let account: `0x${string}` | undefined;
    try {
      account = await requestAccount(wallet.provider);
    } catch (error) {
      const code = walletErrorCode(error);
      if (code === WalletErrorCode.userRejected) return fail(sentences.connectDeclined());
      if (code === WalletErrorCode.requestPending) return fail(sentences.requestPending());
      return fail(sentences.connectFailed(messageOf(error)));
    }
    if (!account) return fail(sentences.connectFailed("it shared no account"));
    const refused = options.refuseAccount?.(account, wallet.name);
    if (refused) return fail(refused);

    setStep({ step: "working", doing: `Asking ${wallet.name} to switch to ${network.name}…` });
    const switched = await switchWalletTo(wallet.provider, network);
    if (!switched.switched) {
      return fail(sentences.wrongNetwork(network, switched.refused, switched.chainId, switched.problem));
    }

    setStep({ step: "working", doing: "Asking the service for the exact price…" });
    const answer = await quotePack(options.path, options.request, network);
    if (answer.kind === "unreachable") return fail(sentences.unreachable());
    if (answer.kind === "refused") return fail(sentences.quoteRefused(answer.status, answer.message));
    const { quote } = answer;

    // The wallet's own view of the chain; a wallet that cannot read it still signs, and the service checks funds.
    const balance = await usdcBalanceOf(wallet.provider, network, account).catch(() => undefined);
    const confirm: PaymentStep = { step: "confirm", wallet, account, quote, balance };
    if (balance !== undefined && balance < quote.amount) {
      return fail(
        sentences.notEnoughUsdc(network, account, usd(balance), usd(quote.amount), usd(quote.amount - balance)),
        confirm,
      );
    }
    setStep(confirm);
  }

  async function pay(confirm: Extract<PaymentStep, { step: "confirm" }>) {
    setFailure(undefined);
    const chainId = await walletChainId(confirm.wallet.provider).catch(() => undefined);
    if (chainId !== network.chainId) return fail(sentences.movedOffNetwork(network));
    setStep({ step: "working", doing: `Waiting for your signature in ${confirm.wallet.name}…` });
    const outcome = await buyPack<Answer>(
      options.path,
      options.request,
      confirm.quote.requirement,
      confirm.wallet.provider,
      confirm.account,
    );
    switch (outcome.kind) {
      case "bought":
        setStep({ step: "choose" });
        return options.onPaid(outcome.answer, confirm.quote.amount, outcome.transaction);
      case "rejected":
        return fail(options.rejected(), confirm);
      case "signing-failed":
        return fail(sentences.signingFailed(outcome.message), confirm);
      case "price-changed":
        return fail(sentences.priceChanged());
      case "payment-refused":
        return fail(sentences.paymentRefused(outcome.message));
      case "failed":
        return fail(options.failed(outcome.status, outcome.message));
      case "unreachable":
        return fail(outcome.afterSigning ? sentences.unreachableAfterSigning() : sentences.unreachable());
    }
  }

  /** Back to choosing (the request changed): what was shown for the old one goes. */
  function reset() {
    setFailure(undefined);
    if (step.step === "confirm" || step.step === "pick-wallet") setStep({ step: "choose" });
  }

  return { step, failure, busy: step.step === "working", usd, start, connect, pay, reset };
}

/** A payment under way, as its page and PaymentSteps (purchase-views.tsx) read and drive it. */
export type WalletPayment = ReturnType<typeof useWalletPayment>;

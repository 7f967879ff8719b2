"use client";

import { useState } from "react";
import { atomicToDecimal } from "../../server/core/money";
import type { EvmPurchaseNetwork, WalletPurchaseTerms } from "../../server/console/wallet-purchase";
import {
  legacyInjectedWallet,
  messageOf,
  requestAccount,
  switchWalletTo,
  walletChainId,
  walletErrorCode,
  WalletErrorCode,
  type BrowserWallet,
} from "../purchase/browser-wallet";
import { sentences } from "../purchase/purchase-sentences";
import { ConfirmPurchase, WalletChoice } from "../purchase/purchase-views";
import { buyPack, quotePack, usdcBalanceOf, type PackQuote, type PackRequest } from "../purchase/wallet-payment";

type Step =
  | { step: "choose" }
  | { step: "working"; doing: string }
  | { step: "pick-wallet"; wallets: BrowserWallet[] }
  | { step: "confirm"; wallet: BrowserWallet; account: `0x${string}`; quote: PackQuote; balance: bigint | undefined };

const NOTHING = "Nothing was charged.";

/**
 * More tokens on one of the signed-in wallet's keys, paid as a purchase is (the same official x402 client, the
 * browser wallet signing one USDC authorization): the service takes the payment only from the wallet that owns the
 * key, so the wallet that pays must be the one signed in.
 */
export function TopUp(props: {
  keyId: number;
  model: string;
  owner: string;
  terms: Pick<WalletPurchaseTerms, "topUpPath" | "tokens">;
  network: EvmPurchaseNetwork;
  wallets: () => BrowserWallet[];
  onDone: (added: number) => void;
  onCancel: () => void;
}) {
  const { terms, network } = props;
  const [tokens, setTokens] = useState(terms.tokens.default);
  const [step, setStep] = useState<Step>({ step: "choose" });
  const [failure, setFailure] = useState<string>();
  const usd = (amount: bigint) => atomicToDecimal(amount, network.usdc.decimals);
  const topUp: PackRequest = { key: props.keyId, model: props.model, tokens };
  const choices: number[] = [];
  for (let count = terms.tokens.min; count <= terms.tokens.max; count += terms.tokens.step) choices.push(count);

  const fail = (sentence: string, next: Step = { step: "choose" }) => {
    setFailure(sentence);
    setStep(next);
  };

  function start() {
    setFailure(undefined);
    window.dispatchEvent(new Event("eip6963:requestProvider"));
    const found = props.wallets().length > 0 ? props.wallets() : [legacyInjectedWallet()].flatMap((w) => w ?? []);
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
      return fail(sentences.connectFailed(messageOf(error)));
    }
    if (!account) return fail(sentences.connectFailed("it shared no account"));
    if (account.toLowerCase() !== props.owner.toLowerCase()) {
      return fail(
        `${wallet.name} shared ${account}, but this key belongs to ${props.owner}: a key is topped up by the wallet that bought it. Switch accounts in the wallet and try again. ${NOTHING}`,
      );
    }
    setStep({ step: "working", doing: `Asking ${wallet.name} to switch to ${network.name}…` });
    const switched = await switchWalletTo(wallet.provider, network);
    if (!switched.switched) {
      return fail(sentences.wrongNetwork(network, switched.refused, switched.chainId, switched.problem));
    }
    setStep({ step: "working", doing: "Asking the service for the exact price…" });
    const answer = await quotePack(terms.topUpPath, topUp, network);
    if (answer.kind === "unreachable") return fail(sentences.unreachable());
    if (answer.kind === "refused") return fail(sentences.quoteRefused(answer.status, answer.message));
    const balance = await usdcBalanceOf(wallet.provider, network, account).catch(() => undefined);
    const confirm: Step = { step: "confirm", wallet, account, quote: answer.quote, balance };
    if (balance !== undefined && balance < answer.quote.amount) {
      const [have, price] = [usd(balance), usd(answer.quote.amount)];
      return fail(sentences.notEnoughUsdc(network, account, have, price, usd(answer.quote.amount - balance)), confirm);
    }
    setStep(confirm);
  }

  async function pay(confirm: Extract<Step, { step: "confirm" }>) {
    setFailure(undefined);
    const chainId = await walletChainId(confirm.wallet.provider).catch(() => undefined);
    if (chainId !== network.chainId) return fail(sentences.movedOffNetwork(network));
    setStep({ step: "working", doing: `Waiting for your signature in ${confirm.wallet.name}…` });
    const outcome = await buyPack(
      terms.topUpPath,
      topUp,
      confirm.quote.requirement,
      confirm.wallet.provider,
      confirm.account,
    );
    switch (outcome.kind) {
      case "bought":
        return props.onDone(tokens);
      case "rejected":
        return fail(`You rejected the signature in your wallet, so no tokens were added. ${NOTHING}`, confirm);
      case "signing-failed":
        return fail(sentences.signingFailed(outcome.message), confirm);
      case "price-changed":
        return fail(sentences.priceChanged());
      case "payment-refused":
        return fail(sentences.paymentRefused(outcome.message));
      case "failed":
        return fail(
          `The service could not add the tokens (${outcome.status}${outcome.message ? `: ${outcome.message}` : ""}). The payment was not collected. ${NOTHING}`,
        );
      case "unreachable":
        return fail(outcome.afterSigning ? sentences.unreachableAfterSigning() : sentences.unreachable());
    }
  }

  const busy = step.step === "working";
  return (
    <div className="top-up" data-testid={`top-up-${props.keyId}`}>
      <form
        className="lookup"
        onSubmit={(event) => {
          event.preventDefault();
          start();
        }}
      >
        <div className="field narrow">
          <label htmlFor={`top-up-tokens-${props.keyId}`}>Tokens to add</label>
          <select
            id={`top-up-tokens-${props.keyId}`}
            value={tokens}
            disabled={busy}
            onChange={(event) => {
              setTokens(Number(event.target.value));
              setFailure(undefined);
              setStep({ step: "choose" });
            }}
          >
            {choices.map((count) => (
              <option key={count} value={count}>
                {count.toLocaleString("en-US")}
              </option>
            ))}
          </select>
        </div>
        {step.step !== "confirm" && (
          <button type="submit" disabled={busy}>
            Get the price
          </button>
        )}{" "}
        <button type="button" className="secondary" disabled={busy} onClick={props.onCancel}>
          Close
        </button>
      </form>
      <div aria-live="polite">
        {busy && <p className="hint">{step.doing}</p>}
        {step.step === "pick-wallet" && (
          <WalletChoice wallets={step.wallets} onPick={(wallet) => void connect(wallet)} />
        )}
        {step.step === "confirm" && (
          <ConfirmPurchase
            pack={topUp}
            network={network}
            account={step.account}
            walletName={step.wallet.name}
            quote={step.quote}
            balance={step.balance}
            format={usd}
            label={`Adds to key #${props.keyId}`}
            collected="when the tokens are added to the key"
            onPay={() => void pay(step)}
            onCancel={() => setStep({ step: "choose" })}
          />
        )}
      </div>
      {failure && (
        <p className="error" role="alert" data-testid="top-up-failure">
          {failure}
        </p>
      )}
    </div>
  );
}

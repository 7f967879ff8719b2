"use client";

import { useEffect, useRef, useState } from "react";
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
  watchWallets,
  type BrowserWallet,
} from "./browser-wallet";
import { sentences } from "./purchase-sentences";
import { BoughtKey, ConfirmPurchase, SolanaPurchase, WalletChoice } from "./purchase-views";
import {
  buyPack,
  quotePack,
  usdcBalanceOf,
  type PackQuote,
  type PackRequest,
  type PrepaidCode,
} from "./wallet-payment";

type Phase =
  | { step: "choose" }
  | { step: "working"; doing: string }
  | { step: "pick-wallet"; wallets: BrowserWallet[] }
  | { step: "confirm"; wallet: BrowserWallet; account: `0x${string}`; quote: PackQuote; balance: bigint | undefined }
  | { step: "bought"; code: PrepaidCode; paid: bigint; transaction: string | undefined };

const count = (value: number) => value.toLocaleString("en-US");

/** Buying a prepaid pack with the visitor's browser wallet: the model, the tokens, the price, the signature, the key. */
export function BuyPack({ terms }: { terms: WalletPurchaseTerms }) {
  if (terms.network.kind === "svm") return <SolanaPurchase terms={terms} network={terms.network} />;
  return <EvmBuyPack terms={terms} network={terms.network} />;
}

function EvmBuyPack({ terms, network }: { terms: WalletPurchaseTerms; network: EvmPurchaseNetwork }) {
  const [pack, setPack] = useState<PackRequest>({ model: terms.defaultModel, tokens: terms.tokens.default });
  const [phase, setPhase] = useState<Phase>({ step: "choose" });
  const [failure, setFailure] = useState<string | undefined>();
  const wallets = useRef<BrowserWallet[]>([]);
  const usd = (amount: bigint) => atomicToDecimal(amount, network.usdc.decimals);
  const tokenSteps: number[] = [];
  for (let tokens = terms.tokens.min; tokens <= terms.tokens.max; tokens += terms.tokens.step) tokenSteps.push(tokens);

  useEffect(() => watchWallets((found) => (wallets.current = found)), []);
  // The key is shown once: leaving the page while it is on screen asks first.
  useEffect(() => {
    if (phase.step !== "bought") return;
    const warn = (event: BeforeUnloadEvent) => event.preventDefault();
    window.addEventListener("beforeunload", warn);
    return () => window.removeEventListener("beforeunload", warn);
  }, [phase.step]);

  const fail = (sentence: string, next: Phase = { step: "choose" }) => {
    setFailure(sentence);
    setPhase(next);
  };

  function start() {
    setFailure(undefined);
    // Wallets answer a request synchronously, so any installed since the page loaded are in the list now.
    window.dispatchEvent(new Event("eip6963:requestProvider"));
    const found = wallets.current.length > 0 ? wallets.current : [legacyInjectedWallet()].flatMap((w) => w ?? []);
    if (found.length === 0) return fail(sentences.noWallet());
    if (found.length > 1) return setPhase({ step: "pick-wallet", wallets: found });
    void connect(found[0]!);
  }

  async function connect(wallet: BrowserWallet) {
    setFailure(undefined);
    setPhase({ step: "working", doing: `Waiting for ${wallet.name} to connect…` });
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

    setPhase({ step: "working", doing: `Asking ${wallet.name} to switch to ${network.name}…` });
    const switched = await switchWalletTo(wallet.provider, network);
    if (!switched.switched) {
      return fail(sentences.wrongNetwork(network, switched.refused, switched.chainId, switched.problem));
    }

    setPhase({ step: "working", doing: "Asking the service for the exact price…" });
    const answer = await quotePack(terms.purchasePath, pack, network);
    if (answer.kind === "unreachable") return fail(sentences.unreachable());
    if (answer.kind === "refused") return fail(sentences.quoteRefused(answer.status, answer.message));
    const { quote } = answer;

    // The wallet's own view of the chain; a wallet that cannot read it still signs, and the service checks funds.
    const balance = await usdcBalanceOf(wallet.provider, network, account).catch(() => undefined);
    const confirm: Phase = { step: "confirm", wallet, account, quote, balance };
    if (balance !== undefined && balance < quote.amount) {
      return fail(
        sentences.notEnoughUsdc(network, account, usd(balance), usd(quote.amount), usd(quote.amount - balance)),
        confirm,
      );
    }
    setPhase(confirm);
  }

  async function pay(confirm: Extract<Phase, { step: "confirm" }>) {
    setFailure(undefined);
    const chainId = await walletChainId(confirm.wallet.provider).catch(() => undefined);
    if (chainId !== network.chainId) return fail(sentences.movedOffNetwork(network));
    setPhase({ step: "working", doing: `Waiting for your signature in ${confirm.wallet.name}…` });
    const outcome = await buyPack(
      terms.purchasePath,
      pack,
      confirm.quote.requirement,
      confirm.wallet.provider,
      confirm.account,
    );
    switch (outcome.kind) {
      case "bought":
        return setPhase({
          step: "bought",
          code: outcome.answer,
          paid: confirm.quote.amount,
          transaction: outcome.transaction,
        });
      case "rejected":
        return fail(sentences.rejected(), confirm);
      case "signing-failed":
        return fail(sentences.signingFailed(outcome.message), confirm);
      case "price-changed":
        return fail(sentences.priceChanged());
      case "payment-refused":
        return fail(sentences.paymentRefused(outcome.message));
      case "failed":
        return fail(sentences.issueFailed(outcome.status, outcome.message));
      case "unreachable":
        return fail(outcome.afterSigning ? sentences.unreachableAfterSigning() : sentences.unreachable());
    }
  }

  const choosePack = (next: PackRequest) => {
    setPack(next);
    setFailure(undefined);
    if (phase.step === "confirm" || phase.step === "pick-wallet") setPhase({ step: "choose" });
  };
  const busy = phase.step === "working";

  if (phase.step === "bought") {
    return (
      <BoughtKey
        code={phase.code}
        paid={usd(phase.paid)}
        transaction={phase.transaction}
        onDone={() => setPhase({ step: "choose" })}
      />
    );
  }
  return (
    <div className="purchase" data-testid="purchase">
      <form
        className="lookup"
        onSubmit={(event) => {
          event.preventDefault();
          start();
        }}
      >
        <div className="field">
          <label htmlFor="pack-model">Model</label>
          <select
            id="pack-model"
            value={pack.model}
            disabled={busy}
            onChange={(event) => choosePack({ ...pack, model: event.target.value })}
          >
            {terms.models.map((model) => (
              <option key={model}>{model}</option>
            ))}
          </select>
        </div>
        <div className="field narrow">
          <label htmlFor="pack-tokens">Tokens</label>
          <select
            id="pack-tokens"
            value={pack.tokens}
            disabled={busy}
            onChange={(event) => choosePack({ ...pack, tokens: Number(event.target.value) })}
          >
            {tokenSteps.map((tokens) => (
              <option key={tokens} value={tokens}>
                {count(tokens)}
              </option>
            ))}
          </select>
        </div>
        {phase.step !== "confirm" && (
          <button type="submit" disabled={busy}>
            Buy with a browser wallet
          </button>
        )}
      </form>
      <p className="hint">
        Pays in USDC on {network.name} with your wallet (MetaMask, Rabby, Coinbase Wallet or any other in this browser):
        you sign once, no gas is needed.
      </p>
      <div aria-live="polite">
        {busy && <p className="hint">{phase.doing}</p>}
        {phase.step === "pick-wallet" && (
          <WalletChoice wallets={phase.wallets} onPick={(wallet) => void connect(wallet)} />
        )}
        {phase.step === "confirm" && (
          <ConfirmPurchase
            pack={pack}
            network={network}
            account={phase.account}
            walletName={phase.wallet.name}
            quote={phase.quote}
            balance={phase.balance}
            format={usd}
            onPay={() => void pay(phase)}
            onCancel={() => choosePack(pack)}
          />
        )}
      </div>
      {failure && (
        <p className="error" role="alert" data-testid="purchase-failure">
          {failure}
        </p>
      )}
    </div>
  );
}

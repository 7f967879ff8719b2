"use client";

import { useEffect, useRef, useState } from "react";
import type { EvmPurchaseNetwork, WalletPurchaseTerms } from "../../server/console/wallet-purchase";
import { watchWallets, type BrowserWallet } from "./browser-wallet";
import { sentences } from "./purchase-sentences";
import { BoughtKey, PaymentSteps, SolanaPurchase } from "./purchase-views";
import { useWalletPayment } from "./use-wallet-payment";
import type { PackRequest, PrepaidCode } from "./wallet-payment";

const count = (value: number) => value.toLocaleString("en-US");

/** Buying a prepaid pack with the visitor's browser wallet: the model, the tokens, the price, the signature, the key. */
export function BuyPack({ terms }: { terms: WalletPurchaseTerms }) {
  if (terms.network.kind === "svm") return <SolanaPurchase terms={terms} network={terms.network} />;
  return <EvmBuyPack terms={terms} network={terms.network} />;
}

function EvmBuyPack({ terms, network }: { terms: WalletPurchaseTerms; network: EvmPurchaseNetwork }) {
  const [pack, setPack] = useState<PackRequest>({ model: terms.defaultModel, tokens: terms.tokens.default });
  const [bought, setBought] = useState<{ code: PrepaidCode; paid: bigint; transaction: string | undefined }>();
  const wallets = useRef<BrowserWallet[]>([]);
  const payment = useWalletPayment<PrepaidCode>({
    network,
    path: terms.purchasePath,
    request: pack,
    wallets: () => wallets.current,
    rejected: sentences.rejected,
    failed: sentences.issueFailed,
    onPaid: (code, paid, transaction) => setBought({ code, paid, transaction }),
  });
  const tokenSteps: number[] = [];
  for (let tokens = terms.tokens.min; tokens <= terms.tokens.max; tokens += terms.tokens.step) tokenSteps.push(tokens);

  useEffect(() => watchWallets((found) => (wallets.current = found)), []);
  // The key is shown once: leaving the page while it is on screen asks first.
  useEffect(() => {
    if (!bought) return;
    const warn = (event: BeforeUnloadEvent) => event.preventDefault();
    window.addEventListener("beforeunload", warn);
    return () => window.removeEventListener("beforeunload", warn);
  }, [bought]);

  const choosePack = (next: PackRequest) => {
    setPack(next);
    payment.reset();
  };
  const { step, busy } = payment;

  if (bought) {
    return (
      <BoughtKey
        code={bought.code}
        paid={payment.usd(bought.paid)}
        transaction={bought.transaction}
        onDone={() => setBought(undefined)}
      />
    );
  }
  return (
    <div className="purchase" data-testid="purchase">
      <form
        className="lookup"
        onSubmit={(event) => {
          event.preventDefault();
          payment.start();
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
        {step.step !== "confirm" && (
          <button type="submit" disabled={busy}>
            Buy with a browser wallet
          </button>
        )}
      </form>
      <p className="hint">
        Pays in USDC on {network.name} with your wallet (MetaMask, Rabby, Coinbase Wallet or any other in this browser):
        you sign once, no gas is needed.
      </p>
      <PaymentSteps payment={payment} failureTestId="purchase-failure" pack={pack} network={network} />
    </div>
  );
}

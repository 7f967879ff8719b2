"use client";

import { useState } from "react";
import type { EvmPurchaseNetwork, WalletPurchaseTerms } from "../../server/console/wallet-purchase";
import type { BrowserWallet } from "../purchase/browser-wallet";
import { PaymentSteps } from "../purchase/purchase-views";
import { useWalletPayment } from "../purchase/use-wallet-payment";
import type { PackRequest } from "../purchase/wallet-payment";

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
  const topUp: PackRequest = { key: props.keyId, model: props.model, tokens };
  const payment = useWalletPayment({
    network,
    path: terms.topUpPath,
    request: topUp,
    wallets: props.wallets,
    refuseAccount: (account, walletName) =>
      account.toLowerCase() === props.owner.toLowerCase()
        ? undefined
        : `${walletName} shared ${account}, but this key belongs to ${props.owner}: a key is topped up by the wallet that bought it. Switch accounts in the wallet and try again. ${NOTHING}`,
    rejected: () => `You rejected the signature in your wallet, so no tokens were added. ${NOTHING}`,
    failed: (status, message) =>
      `The service could not add the tokens (${status}${message ? `: ${message}` : ""}). The payment was not collected. ${NOTHING}`,
    onPaid: () => props.onDone(tokens),
  });
  const choices: number[] = [];
  for (let count = terms.tokens.min; count <= terms.tokens.max; count += terms.tokens.step) choices.push(count);
  const { step, busy } = payment;

  return (
    <div className="top-up" data-testid={`top-up-${props.keyId}`}>
      <form
        className="lookup"
        onSubmit={(event) => {
          event.preventDefault();
          payment.start();
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
              payment.reset();
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
      <PaymentSteps
        payment={payment}
        failureTestId="top-up-failure"
        pack={topUp}
        network={network}
        label={`Adds to key #${props.keyId}`}
        collected="when the tokens are added to the key"
      />
    </div>
  );
}

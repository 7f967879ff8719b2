"use client";

import { CopyButton } from "../copy-button";
import { decimalToAtomic } from "../../server/core/money";
import type { EvmPurchaseNetwork, SvmPurchaseNetwork, WalletPurchaseTerms } from "../../server/console/wallet-purchase";
import type { BrowserWallet } from "./browser-wallet";
import type { WalletPayment } from "./use-wallet-payment";
import type { PackQuote, PackRequest, PrepaidCode } from "./wallet-payment";

const count = (value: number) => value.toLocaleString("en-US");

/** Several wallets announced themselves: the person picks one. */
export function WalletChoice({
  wallets,
  onPick,
}: {
  wallets: BrowserWallet[];
  onPick: (wallet: BrowserWallet) => void;
}) {
  return (
    <div className="wallet-choice">
      <p>Several wallets are installed. Which one pays?</p>
      <ul>
        {wallets.map((wallet) => (
          <li key={wallet.id}>
            <button type="button" className="secondary" onClick={() => onPick(wallet)}>
              {wallet.icon && <img src={wallet.icon} alt="" width={20} height={20} />}
              {wallet.name}
            </button>
          </li>
        ))}
      </ul>
    </div>
  );
}

/** The exact price from the 402, what is signed and from where, before the wallet is asked to sign. */
export function ConfirmPurchase(props: {
  pack: PackRequest;
  network: EvmPurchaseNetwork;
  account: string;
  walletName: string;
  quote: PackQuote;
  balance: bigint | undefined;
  format: (amount: bigint) => string;
  onPay: () => void;
  onCancel: () => void;
  /** What is bought, as the first line names it ("Pack" unless told: a top-up names its key). */
  label?: string;
  /** When the transfer is collected ("when your key is issued" unless told). */
  collected?: string;
}) {
  const { quote, balance, format } = props;
  // The breakdown's decimals as the price's: "0.007" beside "0.008000" reads as another kind of number.
  const sameDecimals = (usd: string) => {
    try {
      return format(decimalToAtomic(usd, props.network.usdc.decimals));
    } catch {
      return usd;
    }
  };
  const price = format(quote.amount);
  const { tokensUsd, settlementFeeUsd } = quote.breakdown;
  const enough = balance === undefined || balance >= quote.amount;
  return (
    <div className="confirm" data-testid="purchase-confirm">
      <dl className="facts">
        <dt>{props.label ?? "Pack"}</dt>
        <dd>
          {count(props.pack.tokens)} tokens of {props.pack.model}
        </dd>
        <dt>Price</dt>
        <dd className="price">
          <strong data-testid="purchase-price">{price}</strong> USD in USDC
          {tokensUsd && settlementFeeUsd && (
            <span className="hint">
              {" "}
              ({sameDecimals(tokensUsd)} for the tokens + {sameDecimals(settlementFeeUsd)} settlement fee)
            </span>
          )}
        </dd>
        <dt>From</dt>
        <dd>
          {props.account} ({props.walletName})
        </dd>
        <dt>Network</dt>
        <dd>
          {props.network.name} ({props.network.id})
        </dd>
        <dt>Your USDC</dt>
        <dd>
          {balance === undefined ? (
            "your wallet could not read it; the service checks it before collecting anything"
          ) : (
            <>
              <span data-testid="purchase-balance">{format(balance)}</span> USDC
            </>
          )}
        </dd>
      </dl>
      <p className="hint">
        Your wallet shows a USDC transfer authorization of exactly {price} to {quote.requirement.payTo}. Signing costs
        no gas; the transfer is collected only {props.collected ?? "when your key is issued"}.
      </p>
      <div className="actions">
        {enough && (
          <button type="button" onClick={props.onPay}>
            Sign and pay {price} USD
          </button>
        )}
        <button type="button" className="secondary" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </div>
  );
}

/**
 * Where a payment with the browser wallet stands (use-wallet-payment.ts), announced as it changes: what it waits
 * for, the choice of wallet, the price to confirm; then the failure, if any, as an alert.
 */
export function PaymentSteps(props: {
  payment: WalletPayment;
  failureTestId: string;
  pack: PackRequest;
  network: EvmPurchaseNetwork;
  label?: string;
  collected?: string;
}) {
  const { payment } = props;
  const { step } = payment;
  return (
    <>
      <div aria-live="polite">
        {step.step === "working" && <p className="hint">{step.doing}</p>}
        {step.step === "pick-wallet" && (
          <WalletChoice wallets={step.wallets} onPick={(wallet) => void payment.connect(wallet)} />
        )}
        {step.step === "confirm" && (
          <ConfirmPurchase
            pack={props.pack}
            network={props.network}
            account={step.account}
            walletName={step.wallet.name}
            quote={step.quote}
            balance={step.balance}
            format={payment.usd}
            label={props.label}
            collected={props.collected}
            onPay={() => void payment.pay(step)}
            onCancel={payment.reset}
          />
        )}
      </div>
      {payment.failure && (
        <p className="error" role="alert" data-testid={props.failureTestId}>
          {payment.failure}
        </p>
      )}
    </>
  );
}

/** The key, shown this once, with its balance and how to use it. */
export function BoughtKey(props: {
  code: PrepaidCode;
  paid: string;
  transaction: string | undefined;
  onDone: () => void;
}) {
  const { code } = props;
  return (
    <div className="bought" data-testid="purchase-bought">
      <h3>Your prepaid key</h3>
      <p className="warning" role="alert">
        <strong>This key is shown only now.</strong> Copy it and keep it somewhere safe: this page will not show it
        again, and the service keeps only a hash of it, so it cannot be recovered. Whoever holds it can spend its
        tokens.
      </p>
      <div className="key-row">
        <code data-testid="bought-key">{code.code}</code>
        <CopyButton text={code.code} label="the key" />
      </div>
      <dl className="facts">
        <dt>Balance</dt>
        <dd>
          <span data-testid="bought-balance">{count(code.tokens.remaining)}</span> of {count(code.tokens.total)} tokens
        </dd>
        <dt>Model</dt>
        <dd data-testid="bought-model">{code.model}</dd>
        <dt>Paid</dt>
        <dd>{props.paid} USD in USDC</dd>
        {props.transaction && (
          <>
            <dt>Transaction</dt>
            <dd>{props.transaction}</dd>
          </>
        )}
        <dt>Use it at</dt>
        <dd>
          {code.api_base} with <code>Authorization: Bearer &lt;key&gt;</code>
        </dd>
      </dl>
      <p className="hint">
        Check its balance any time on the <a href="/keys">Prepaid key</a> page.
      </p>
      <button type="button" className="secondary" onClick={props.onDone}>
        I have copied it: buy another pack
      </button>
    </div>
  );
}

/** Solana deployments: the browser flow is EVM-only for now; how to buy instead. */
export function SolanaPurchase({ terms, network }: { terms: WalletPurchaseTerms; network: SvmPurchaseNetwork }) {
  const body = JSON.stringify({ model: terms.defaultModel, tokens: terms.tokens.default });
  return (
    <div className="purchase" data-testid="purchase-solana">
      <p>
        <strong>Buying in the browser is for EVM networks for now.</strong> This deployment is paid on {network.name} (
        {network.id}), and browser Solana wallets are not supported here yet.
      </p>
      <p className="hint">
        Buy a key with an x402 client for Solana: POST <code>{body}</code> to <code>{terms.purchasePath}</code> with{" "}
        <code>@x402/fetch</code> and <code>registerExactSvmScheme</code> from <code>@x402/svm/exact/client</code>,
        signing with your Solana keypair. The key comes back once, in the answer.
      </p>
    </div>
  );
}

"use client";

import { useEffect, useRef, useState } from "react";
import type { WalletPurchaseTerms } from "../../server/console/wallet-purchase";
import { CopyButton } from "../copy-button";
import {
  messageOf,
  requestAccount,
  walletErrorCode,
  WalletErrorCode,
  walletsNow,
  watchWallets,
  type BrowserWallet,
} from "../purchase/browser-wallet";
import { TopUp } from "./top-up";
import { ownerCall, signInWithWallet } from "./wallet-sign-in";

/** A key as the owners' endpoints describe it (never its code). */
interface OwnedKey {
  id: number;
  code_prefix: string | null;
  model: string;
  status: "active" | "disabled" | "revoked";
  tokens: { total: number; used: number; reserved: number; remaining: number };
  created_at: number;
  last_used_at: number | null;
}

type Phase =
  | { step: "checking" }
  | { step: "signed-out" }
  | { step: "pick-wallet"; wallets: BrowserWallet[] }
  | { step: "working"; doing: string }
  | { step: "signed-in"; owner: string; keys: OwnedKey[] };

const day = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10);

/**
 * The console's "My keys": the visitor signs in once with the browser wallet that paid for its keys (EIP-6963, or
 * window.ethereum), then sees them, tops one up (paid with the same wallet), rotates one (its new code shown once,
 * to copy) or revokes one.
 */
export function MyKeys({ terms }: { terms: WalletPurchaseTerms }) {
  const [phase, setPhase] = useState<Phase>({ step: "checking" });
  const [failure, setFailure] = useState<string>();
  const [fresh, setFresh] = useState<{ code: string }>();
  const [confirming, setConfirming] = useState<number>();
  const [toppingUp, setToppingUp] = useState<number>();
  const [added, setAdded] = useState<{ key: number; tokens: number }>();
  const wallets = useRef<BrowserWallet[]>([]);

  useEffect(() => watchWallets((found) => (wallets.current = found)), []);

  async function load(): Promise<void> {
    const answer = await ownerCall<{ owner: string; data: OwnedKey[] }>("").catch(() => undefined);
    if (!answer) return void setFailure("The service could not be reached. Check your connection and try again.");
    if (answer.status === 402) return setPhase({ step: "signed-out" });
    if (answer.status !== 200)
      return void setFailure(answer.body.error?.message ?? `The service answered ${answer.status}.`);
    setPhase({ step: "signed-in", owner: answer.body.owner, keys: answer.body.data });
  }

  useEffect(() => void load(), []);

  function start() {
    setFailure(undefined);
    const found = walletsNow(() => wallets.current);
    if (found.length === 0) return setFailure("No browser wallet was found. Install one, or unlock it, and reload.");
    if (found.length > 1) return setPhase({ step: "pick-wallet", wallets: found });
    void signIn(found[0]!);
  }

  async function signIn(wallet: BrowserWallet) {
    setPhase({ step: "working", doing: `Waiting for ${wallet.name} to connect…` });
    try {
      const account = await requestAccount(wallet.provider);
      if (!account) throw new Error("it shared no account");
      setPhase({ step: "working", doing: `Sign the message in ${wallet.name} to prove you own ${account}…` });
      const answer = await signInWithWallet(wallet.provider, account);
      if (answer.status !== 200) throw new Error(answer.body.error?.message ?? `the service answered ${answer.status}`);
      await load();
    } catch (error) {
      const declined = walletErrorCode(error) === WalletErrorCode.userRejected;
      setFailure(declined ? "You declined to sign: you are not signed in." : `Sign-in failed: ${messageOf(error)}.`);
      setPhase({ step: "signed-out" });
    }
  }

  async function act(action: "rotate" | "revoke", id: number) {
    setFailure(undefined);
    setConfirming(undefined);
    setAdded(undefined);
    const answer = await ownerCall<{ code?: string }>(action, { key: id }).catch(() => undefined);
    if (!answer) return setFailure("The service could not be reached. Check your connection and try again.");
    if (answer.status === 402) return setPhase({ step: "signed-out" });
    if (answer.status !== 200)
      return setFailure(answer.body.error?.message ?? `The service answered ${answer.status}.`);
    if (action === "rotate" && answer.body.code) setFresh({ code: answer.body.code });
    await load();
  }

  async function signOut() {
    await ownerCall("sign-out", {}).catch(() => undefined);
    setFresh(undefined);
    setPhase({ step: "signed-out" });
  }

  const network = terms.network;
  if (network.kind !== "evm") {
    return (
      <p className="note">
        On this network, sign in with an agent: the owners&apos; endpoints take the SIGN-IN-WITH-X header (see the API
        documentation).
      </p>
    );
  }
  return (
    <div>
      {failure && (
        <p className="error" role="alert" data-testid="my-keys-failure">
          {failure}
        </p>
      )}
      {phase.step === "checking" && <p className="skeleton">Checking whether you are signed in…</p>}
      {phase.step === "working" && <p role="status">{phase.doing}</p>}
      {phase.step === "signed-out" && (
        <button type="button" onClick={start}>
          Sign in with your wallet
        </button>
      )}
      {phase.step === "pick-wallet" && (
        <div role="group" aria-label="Choose a wallet">
          {phase.wallets.map((wallet) => (
            <button key={wallet.id} type="button" className="secondary" onClick={() => void signIn(wallet)}>
              {wallet.name}
            </button>
          ))}
        </div>
      )}
      {phase.step === "signed-in" && (
        <>
          <p>
            Signed in as <code data-testid="owner">{phase.owner}</code>{" "}
            <button type="button" className="secondary" onClick={() => void signOut()}>
              Sign out
            </button>
          </p>
          {added && (
            <p className="note" role="status" data-testid="top-up-done">
              Added {added.tokens.toLocaleString("en-US")} tokens to key #{added.key}.
            </p>
          )}
          {fresh && (
            <div className="result" role="status">
              <p>
                The key&apos;s new code. Copy it now: it is shown once. The old code no longer works; its tokens and
                limits are the same.
              </p>
              <div className="code-head">
                <code data-testid="new-code">{fresh.code}</code>
                <CopyButton text={fresh.code} label="the new code" />
              </div>
            </div>
          )}
          {phase.keys.length === 0 ? (
            <p className="note">This wallet has bought no keys.</p>
          ) : (
            <div className="table-scroll">
              <table>
                <thead>
                  <tr>
                    <th>Key</th>
                    <th>Model</th>
                    <th>Status</th>
                    <th className="num">Tokens left</th>
                    <th>Bought</th>
                    <th>Last used</th>
                    <th>
                      <span className="skip">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {phase.keys.map((key) => (
                    <tr data-testid={`key-${key.id}`}>
                      <th scope="row">
                        <code>{key.code_prefix ? `${key.code_prefix}…` : `#${key.id}`}</code>
                      </th>
                      <td>{key.model}</td>
                      <td>{key.status}</td>
                      <td className="num" data-testid={`key-${key.id}-remaining`}>
                        {key.tokens.remaining.toLocaleString("en-US")} of {key.tokens.total.toLocaleString("en-US")}
                      </td>
                      <td>{day(key.created_at)}</td>
                      <td>{key.last_used_at ? day(key.last_used_at) : "never"}</td>
                      <td className="row-actions">
                        {key.status !== "revoked" &&
                          (confirming === key.id ? (
                            <>
                              <button type="button" onClick={() => void act("revoke", key.id)}>
                                Revoke for good
                              </button>{" "}
                              <button type="button" className="secondary" onClick={() => setConfirming(undefined)}>
                                Keep it
                              </button>
                            </>
                          ) : (
                            <>
                              <button
                                type="button"
                                className="secondary"
                                onClick={() => {
                                  setAdded(undefined);
                                  setToppingUp(key.id);
                                }}
                              >
                                Top up
                              </button>{" "}
                              <button type="button" className="secondary" onClick={() => void act("rotate", key.id)}>
                                Rotate
                              </button>{" "}
                              <button type="button" className="secondary" onClick={() => setConfirming(key.id)}>
                                Revoke
                              </button>
                            </>
                          ))}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          {phase.keys
            .filter((key) => key.id === toppingUp)
            .map((key) => (
              <section key={key.id} className="top-up-panel" aria-label={`Top up key #${key.id}`}>
                <h3>
                  Top up key #{key.id} ({key.model})
                </h3>
                <TopUp
                  keyId={key.id}
                  model={key.model}
                  owner={phase.owner}
                  terms={terms}
                  network={network}
                  wallets={() => wallets.current}
                  onDone={(tokens) => {
                    setToppingUp(undefined);
                    setAdded({ key: key.id, tokens });
                    void load();
                  }}
                  onCancel={() => setToppingUp(undefined)}
                />
              </section>
            ))}
        </>
      )}
    </div>
  );
}

"use client";

import { useState, type FormEvent } from "react";
import { UsageBar } from "../usage-bar";

interface KeyStatus {
  valid: boolean;
  reason: string;
  model: string;
  tokens: { total: number; used: number; reserved: number; remaining: number };
}

type State =
  { kind: "idle" } | { kind: "loading" } | { kind: "found"; status: KeyStatus } | { kind: "error"; message: string };

export function KeyLookup({ statusUrl }: { statusUrl: string }) {
  const [key, setKey] = useState("");
  const [state, setState] = useState<State>({ kind: "idle" });

  async function lookUp(event: FormEvent) {
    event.preventDefault();
    const code = key.trim();
    if (!code) {
      setState({ kind: "error", message: "Paste a prepaid key first." });
      return;
    }
    setState({ kind: "loading" });
    try {
      // The key travels only in this header: never in the URL, storage or a cookie.
      const response = await fetch(statusUrl, {
        headers: { Authorization: `Bearer ${code}` },
        cache: "no-store",
        credentials: "omit",
      });
      if (response.status === 401) {
        setState({
          kind: "error",
          message: "No prepaid key matches. Check that you pasted the whole key; it starts with paysvc_pk_.",
        });
        return;
      }
      if (!response.ok) {
        setState({ kind: "error", message: `The status service answered ${response.status}. Try again in a moment.` });
        return;
      }
      setState({ kind: "found", status: (await response.json()) as KeyStatus });
    } catch {
      setState({
        kind: "error",
        message: "The status service could not be reached. Check your connection and try again.",
      });
    }
  }

  return (
    <>
      <form className="lookup" onSubmit={lookUp}>
        <div className="field">
          <label htmlFor="prepaid-key">Prepaid key</label>
          <input
            id="prepaid-key"
            name="prepaid-key"
            type="password"
            autoComplete="off"
            spellCheck={false}
            placeholder="paysvc_pk_..."
            value={key}
            onChange={(event) => setKey(event.target.value)}
            aria-describedby="prepaid-key-hint"
          />
          <span id="prepaid-key-hint" className="hint">
            The key you received when you bought a pack.
          </span>
        </div>
        <button type="submit" disabled={state.kind === "loading"}>
          {state.kind === "loading" ? "Checking…" : "Check key"}
        </button>
      </form>
      <div className="result" aria-live="polite" data-testid="key-result">
        {state.kind === "loading" && <p className="hint">Checking the key…</p>}
        {state.kind === "error" && (
          <p className="error" role="alert">
            {state.message}
          </p>
        )}
        {state.kind === "found" && (
          <>
            <p>
              <span className={`status ${state.status.valid ? "good" : "bad"}`} data-testid="key-state">
                {state.status.valid ? "Valid" : "Disabled"}
              </span>{" "}
              for <strong data-testid="key-model">{state.status.model}</strong>
            </p>
            <UsageBar
              label="budget"
              unit="tokens"
              total={state.status.tokens.total}
              used={state.status.tokens.used}
              reserved={state.status.tokens.reserved}
            />
            {!state.status.valid && (
              <p className="hint">This key&apos;s budget is used up. Buy a new pack for a new key.</p>
            )}
          </>
        )}
      </div>
    </>
  );
}

"use client";

import { useCallback, useEffect, useState } from "react";
import { UsageBar } from "../usage-bar";

interface Window {
  limit: number;
  used: number;
  reset_seconds: number;
}

interface Quota {
  model: string;
  per10Min: Window;
  perDay: Window;
}

function resetText(seconds: number): string {
  if (seconds <= 0) return "nothing to reset";
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  const rest = seconds % 60;
  if (hours > 0) return `next slot frees in ${hours} h ${minutes} min`;
  if (minutes > 0) return `next slot frees in ${minutes} min ${rest} s`;
  return `next slot frees in ${rest} s`;
}

export function QuotaView() {
  const [quota, setQuota] = useState<Quota | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [loading, setLoading] = useState(true);

  const load = useCallback(async () => {
    setLoading(true);
    try {
      const response = await fetch("/v1/free/chat/completions/quota", { cache: "no-store" });
      if (!response.ok) throw new Error(`answered ${response.status}`);
      setQuota((await response.json()) as Quota);
      setError(undefined);
    } catch (failure) {
      setError(`The quota could not be loaded (${(failure as Error).message}). Try again.`);
    } finally {
      setLoading(false);
    }
  }, []);

  useEffect(() => {
    void load();
  }, [load]);

  const windows = [
    { key: "per10Min", title: "Last 10 minutes", window: quota?.per10Min },
    { key: "perDay", title: "Last 24 hours", window: quota?.perDay },
  ];
  return (
    <div aria-busy={loading} aria-live="polite">
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <div className="quota-grid">
        {windows.map(({ key, title, window }) => (
          <div key={key} data-testid={`quota-${key}`}>
            <h2>{title}</h2>
            {window ? (
              <>
                <UsageBar label={key} unit="requests" total={window.limit} used={window.used} />
                <p className="hint">{resetText(window.reset_seconds)}</p>
              </>
            ) : (
              <>
                <div className="bar skeleton" />
                <div className="legend skeleton">loading</div>
                <p className="hint skeleton">loading</p>
              </>
            )}
          </div>
        ))}
      </div>
      <p>
        <button type="button" className="secondary" onClick={() => void load()} disabled={loading}>
          {loading ? "Refreshing…" : "Refresh"}
        </button>
      </p>
    </div>
  );
}

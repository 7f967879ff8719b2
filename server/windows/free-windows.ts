import { freeChat, type FreeEmbeddingsSettings, type FreeWindow } from "../../config/free-tier";
import { CallerWindows } from "./caller-windows";
import type { WindowLog } from "./window-log";

/** "10 requests per 10 minutes and 100 requests per day". */
export function describeWindows(windows: readonly FreeWindow[]): string {
  const length = (window: FreeWindow) =>
    window.durationMs === 24 * 60 * 60 * 1000 ? "day" : `${Math.round(window.durationMs / 60_000)} minutes`;
  return windows.map((window) => `${window.limit} requests per ${length(window)}`).join(" and ");
}

/** The free chat's windows: the spec's, per caller. */
export function freeChatWindows(log: WindowLog): CallerWindows {
  return new CallerWindows(log, {
    name: undefined,
    rules: freeChat.windows,
    refusal: (retryAfter) =>
      `The free tier allows ${describeWindows(freeChat.windows)} per caller; retry in ${retryAfter} s or use the paid endpoint /v1/chat/completions`,
  });
}

/** The free embeddings' windows, as configured (FREE_EMBEDDINGS_PER_10_MIN, FREE_EMBEDDINGS_PER_DAY). */
export function freeEmbeddingsWindows(log: WindowLog, settings: FreeEmbeddingsSettings): CallerWindows {
  return new CallerWindows(log, {
    name: "embeddings",
    rules: settings.windows,
    refusal: (retryAfter) =>
      `Free embeddings allow ${describeWindows(settings.windows)} per caller; retry in ${retryAfter} s`,
  });
}

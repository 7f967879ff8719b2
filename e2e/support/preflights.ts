import type { Page } from "playwright-core";

/** A CORS preflight the browser sent, and what it answered. */
export interface Preflight {
  url: string;
  requestHeaders: Record<string, string>;
  status?: number;
  responseHeaders?: Record<string, string>;
}

/**
 * Records a page's CORS preflights through the DevTools protocol: Playwright's request events leave them out,
 * as the browser sends them on its own.
 */
export async function recordPreflights(page: Page): Promise<() => Preflight[]> {
  const preflights = new Map<string, Preflight>();
  const session = await page.context().newCDPSession(page);
  session.on("Network.requestWillBeSent", (event) => {
    if (event.initiator.type !== "preflight") return;
    preflights.set(event.requestId, { url: event.request.url, requestHeaders: lowerCased(event.request.headers) });
  });
  session.on("Network.responseReceived", (event) => {
    const preflight = preflights.get(event.requestId);
    if (!preflight) return;
    preflight.status = event.response.status;
    preflight.responseHeaders = lowerCased(event.response.headers);
  });
  await session.send("Network.enable");
  return () => [...preflights.values()];
}

function lowerCased(headers: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), String(value)]));
}

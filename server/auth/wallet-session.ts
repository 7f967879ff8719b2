import { createHmac, timingSafeEqual } from "node:crypto";
import { sessionValue, type SessionKind } from "./session-cookie";

/**
 * A signed-in wallet's browser session (the console's "My keys"): `__Host-paysvc_wallet` over HTTPS, else on
 * /v1/prepaid/keys; an hour. Stateless: the wallet and the expiry, signed with the deployment's sign-in secret, so
 * every instance takes it; signing out clears the browser's cookie.
 */
export const WALLET_SESSION: SessionKind = { name: "paysvc_wallet", plainPath: "/v1/prepaid/keys", seconds: 3600 };

function signature(secret: string, wallet: string, expires: number): string {
  return createHmac("sha256", secret).update(`wallet-session:${wallet}:${expires}`).digest("base64url");
}

/** A new session's cookie value for `wallet` (as keys record owners): the wallet, its expiry, their HMAC. */
export function newWalletSession(secret: string, wallet: string, now = Date.now()): string {
  const expires = Math.floor(now / 1000) + WALLET_SESSION.seconds;
  return `${wallet}.${expires}.${signature(secret, wallet, expires)}`;
}

/** The wallet of an unexpired session signed with `secret` in the Cookie header, if any. */
export function walletOfSession(cookieHeader: string | null, secret: string, now = Date.now()): string | undefined {
  const match = /^(0x[0-9a-f]{40}|[1-9A-HJ-NP-Za-km-z]{32,44})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(
    sessionValue(cookieHeader, WALLET_SESSION) ?? "",
  );
  if (!match) return undefined;
  const [wallet, expires] = [match[1]!, Number(match[2])];
  if (expires * 1000 <= now) return undefined;
  const expected = Buffer.from(signature(secret, wallet, expires));
  const given = Buffer.from(match[3]!);
  return given.length === expected.length && timingSafeEqual(given, expected) ? wallet : undefined;
}

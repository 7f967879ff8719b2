import type { WalletSignInContext } from "../auth/signed-in-wallet";
import { withWallet } from "../auth/with-principal";
import { reachedOverHttps, sessionCookie } from "../auth/session-cookie";
import { WALLET_SESSION } from "../auth/wallet-session";
import { jsonAnswer, type ApiAnswer } from "../http/api-answer";
import type { ApiRequest } from "../http/api-request";

const https = (context: WalletSignInContext, request: ApiRequest) =>
  reachedOverHttps(context.config.publicBaseUrl, request, context.clientAddresses);

/**
 * POST /v1/prepaid/keys/sign-in: a wallet that signed a challenge (SIGN-IN-WITH-X, a session does not renew itself)
 * gets a browser session for an hour, so that a person signs once in the console.
 */
export const signInOwner = withWallet(
  async (context: WalletSignInContext, request: ApiRequest, wallet): Promise<ApiAnswer> => {
    const value = context.signIn.newSession(wallet);
    const expires = Number(value.split(".")[1]);
    return jsonAnswer(
      { object: "wallet_session", owner: wallet.address, expires_at: expires },
      {
        headers: {
          "Cache-Control": "no-store",
          "Set-Cookie": sessionCookie(WALLET_SESSION, value, https(context, request)),
        },
      },
    );
  },
  { session: false },
);

/** POST /v1/prepaid/keys/sign-out: the browser's session cookie cleared. */
export function signOutOwner(context: WalletSignInContext, request: ApiRequest): ApiAnswer {
  return jsonAnswer(
    { object: "wallet_session", owner: null, expires_at: null },
    {
      headers: {
        "Cache-Control": "no-store",
        "Set-Cookie": sessionCookie(WALLET_SESSION, undefined, https(context, request)),
      },
    },
  );
}

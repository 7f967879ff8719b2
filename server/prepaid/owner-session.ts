import type { WalletSignInContext } from "../auth/signed-in-wallet";
import { withWallet } from "../auth/with-principal";
import { fromThisSite } from "../auth/form-origin";
import { reachedOverHttps, sessionCookie } from "../auth/session-cookie";
import { WALLET_SESSION } from "../auth/wallet-sign-in";
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
    const { value, expires } = await context.signIn.newSession(wallet);
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

/**
 * POST /v1/prepaid/keys/sign-out: the wallet's sessions ended in every browser (a session's holder only, from this
 * site's page: anyone's request cannot sign a wallet out), and this browser's cookie cleared.
 */
export async function signOutOwner(context: WalletSignInContext, request: ApiRequest): Promise<ApiAnswer> {
  const secure = https(context, request);
  if (fromThisSite(request, context.config.publicBaseUrl, secure)) await context.signIn.signOut(request);
  return jsonAnswer(
    { object: "wallet_session", owner: null, expires_at: null },
    {
      headers: {
        "Cache-Control": "no-store",
        "Set-Cookie": sessionCookie(WALLET_SESSION, undefined, secure),
      },
    },
  );
}

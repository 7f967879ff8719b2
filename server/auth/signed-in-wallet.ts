import type { ServiceConfig } from "../../config/service-config";
import { ApiError } from "../core/errors";
import type { ApiRequest } from "../http/api-request";
import type { ClientAddressResolver } from "../http/client-address";
import { resourceUrl } from "../http/public-urls";
import { fromThisSite } from "./form-origin";
import type { WalletPrincipal } from "./principal";
import { reachedOverHttps } from "./session-cookie";
import type { WalletSignIn } from "./wallet-sign-in";

/** What resolving a signed-in wallet reaches. */
export interface WalletSignInContext {
  config: Pick<ServiceConfig, "publicBaseUrl" | "prepaid">;
  signIn: WalletSignIn;
  clientAddresses: ClientAddressResolver;
}

/**
 * The wallet a request acts as: the message it signed (SIGN-IN-WITH-X), else its browser session (the console's,
 * unless `session` is false), a POST with it only from this site's own page. Without either, a 402 whose
 * PAYMENT-REQUIRED carries the challenge to sign (`accepts` empty: nothing is paid), which x402 clients with the
 * sign-in extension answer by themselves; a refused message or page, 401.
 */
export async function signedInWallet(
  context: WalletSignInContext,
  request: ApiRequest,
  { session = true }: { session?: boolean } = {},
): Promise<WalletPrincipal> {
  const url = resourceUrl(context.config, request);
  const signed = await context.signIn.signedIn(request, url);
  if (signed) return signed;
  const fromSession = session ? await context.signIn.fromSession(request) : undefined;
  if (fromSession) {
    const https = reachedOverHttps(context.config.publicBaseUrl, request, context.clientAddresses);
    if (request.method === "POST" && !fromThisSite(request, context.config.publicBaseUrl, https)) {
      throw new ApiError(
        "invalid_sign_in",
        "Sign-in refused: a signed-in session is used from this site's own page only.",
      );
    }
    return fromSession;
  }
  const message =
    "Sign in with the wallet that paid for the keys: sign the challenge in PAYMENT-REQUIRED's " +
    'extensions["sign-in-with-x"] and send it again in SIGN-IN-WITH-X.';
  const document = {
    x402Version: 2,
    error: message,
    resource: { url, description: "The prepaid keys of the signed-in wallet", mimeType: "application/json" },
    accepts: [],
    extensions: context.signIn.challenge(url),
  };
  const header = Buffer.from(JSON.stringify(document), "utf8").toString("base64");
  throw new ApiError("sign_in_required", message, { headers: { "PAYMENT-REQUIRED": header } });
}

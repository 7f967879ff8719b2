import { ApiError } from "../core/errors";
import type { ApiAnswer } from "../http/api-answer";
import type { ApiRequest } from "../http/api-request";
import { keyPrincipal } from "./key-principal";
import type { KeyPrincipal, WalletPrincipal } from "./principal";
import { signedInWallet, type WalletSignInContext } from "./signed-in-wallet";

type Handler<C, P> = (context: C, request: ApiRequest, principal: P) => Promise<ApiAnswer> | ApiAnswer;

/**
 * An endpoint's handler for a signed-in wallet: the wrapper resolves the wallet (its signed message, else its
 * browser session unless `session` is false; else the 402 with the challenge, or 401) before the handler runs, so a
 * handler never sees a request without its principal.
 */
export function withWallet<C extends WalletSignInContext>(
  handler: Handler<C, WalletPrincipal>,
  options: { session?: boolean } = {},
) {
  return async (context: C, request: ApiRequest): Promise<ApiAnswer> =>
    handler(context, request, await signedInWallet(context, request, options));
}

/** An endpoint's handler for a prepaid key's holder: the bearer resolved first, 401 without one. */
export function withKey<C>(handler: Handler<C, KeyPrincipal>) {
  return async (context: C, request: ApiRequest): Promise<ApiAnswer> => {
    const key = keyPrincipal(request);
    if (!key)
      throw new ApiError("invalid_api_key", "Send the prepaid key (paysvc_pk_...) as Authorization: Bearer <key>.");
    return handler(context, request, key);
  };
}

import { freeEndpoint } from "../context/endpoint";
import { listOwnedKeys, lowerOwnedKeyLimits, revokeOwnedKey, rotateOwnedKey } from "../prepaid/owner-keys";
import { signInOwner, signOutOwner } from "../prepaid/owner-session";

const uses = ["config", "ownedKeys", "signIn", "limits", "clientAddresses"] as const;
const sessionUses = ["config", "signIn", "clientAddresses"] as const;
const signIn = "The paying wallet signs in (SIGN-IN-WITH-X).";
const keyView = "{object: prepaid_key, id, code_prefix, model, status, tokens, limits, created_at, last_used_at}";
const errors = {
  401: "invalid_sign_in: the signed message is refused (another origin or chain, expired, used before, bad signature)",
  402: "sign_in_required: PAYMENT-REQUIRED carries the sign-in challenge (accepts empty: nothing to pay)",
};

/** The signed-in wallet's prepaid keys. */
export const ownedKeysEndpoint = freeEndpoint({
  method: "GET",
  paths: ["/v1/prepaid/keys"],
  access: ["free"],
  uses,
  handle: listOwnedKeys,
  docs: {
    operationId: "listOwnedPrepaidKeys",
    summary: `The prepaid keys a wallet paid for. ${signIn}`,
    responseDescription: `{object: list, owner, data: [${keyView}]}`,
    errors,
  },
});

/** A new code for one of them. */
export const rotateKeyEndpoint = freeEndpoint({
  method: "POST",
  paths: ["/v1/prepaid/keys/rotate"],
  access: ["free"],
  uses,
  handle: rotateOwnedKey,
  docs: {
    operationId: "rotatePrepaidKey",
    summary: `A new code for a key (body {key: id}), the old one refused at once; balance and limits kept. ${signIn}`,
    responseDescription: `${keyView} with code (shown once)`,
    example: { key: 1 },
    errors: { ...errors, 404: "not_found: no usable key of that id is the wallet's" },
  },
});

/** Revokes one. */
export const revokeKeyEndpoint = freeEndpoint({
  method: "POST",
  paths: ["/v1/prepaid/keys/revoke"],
  access: ["free"],
  uses,
  handle: revokeOwnedKey,
  docs: {
    operationId: "revokePrepaidKey",
    summary: `Revokes a key (body {key: id}) for good; its unused tokens stay on record. ${signIn}`,
    responseDescription: keyView,
    example: { key: 1 },
    errors: { ...errors, 404: "not_found: no usable key of that id is the wallet's" },
  },
});

/** Lowers one's limits. */
export const keyLimitsEndpoint = freeEndpoint({
  method: "POST",
  paths: ["/v1/prepaid/keys/limits"],
  access: ["free"],
  uses,
  handle: lowerOwnedKeyLimits,
  docs: {
    operationId: "lowerPrepaidKeyLimits",
    summary: `Lowers a key's rate limits (body {key: id, limits: {requests_per_minute?, tokens_per_minute?, concurrent?}}); never raises them. ${signIn}`,
    responseDescription: keyView,
    example: { key: 1, limits: { requests_per_minute: 10 } },
    errors: { ...errors, 404: "not_found: no usable key of that id is the wallet's" },
  },
});

/** A browser session for a wallet that signed in once (the console's "My keys"). */
export const ownerSignInEndpoint = freeEndpoint({
  method: "POST",
  paths: ["/v1/prepaid/keys/sign-in"],
  access: ["free"],
  uses: sessionUses,
  handle: signInOwner,
  docs: {
    operationId: "signInWallet",
    summary: `A browser session (an hour, a cookie) for the owners' endpoints. ${signIn}`,
    responseDescription: "{object: wallet_session, owner, expires_at}, with Set-Cookie",
    errors,
  },
});

/** Its end. */
export const ownerSignOutEndpoint = freeEndpoint({
  method: "POST",
  paths: ["/v1/prepaid/keys/sign-out"],
  access: ["free"],
  uses: sessionUses,
  handle: signOutOwner,
  docs: {
    operationId: "signOutWallet",
    summary: "Ends the wallet's browser sessions, in every browser (clears this one's cookie)",
    responseDescription: "{object: wallet_session, owner: null}, with Set-Cookie",
  },
});

import { createHmac, randomBytes } from "node:crypto";
import {
  buildSIWxSchema,
  parseSIWxHeader,
  SIGN_IN_WITH_X,
  validateSIWxMessage,
  verifySIWxSignature,
  type EVMMessageVerifier,
  type SIWxPayload,
} from "@x402/extensions/sign-in-with-x";
import { ApiError } from "../core/errors";
import type { ApiRequest } from "../http/api-request";
import type { QuoteHoldStore } from "../payment/quote-hold";
import { walletOwner, type WalletPrincipal } from "./principal";
import type { SessionKind } from "./session-cookie";
import type { Session, SessionStore } from "./session-store";

/** What a deployment's sign-ins are bound to. */
export interface SignInTerms {
  /** The key of the nonces' HMAC, shared by every instance over the database. */
  secretKey: string;
  /** The deployment's network (CAIP-2): the one chain a wallet signs in on. */
  network: string;
  /** Where single-use nonces are claimed, shared by every instance. */
  claims: QuoteHoldStore;
  /** How an EVM signature is checked (contract wallets' too); throws CHAIN_UNREADABLE when the chain cannot say. */
  verifyMessage?: EVMMessageVerifier;
  /** How long a challenge may be signed and used (seconds). */
  lifetimeSeconds: number;
  /** The browser sessions of wallets signed in (the console's), one kind of the deployment's sessions. */
  sessions: SessionStore;
}

/**
 * A signed-in wallet's browser session (the console's "My keys"): `__Host-paysvc_wallet` over HTTPS, else on
 * /v1/prepaid/keys; an hour; signed with the deployment's sign-in secret; its subject the wallet as keys record it.
 */
export const WALLET_SESSION: SessionKind = { name: "paysvc_wallet", plainPath: "/v1/prepaid/keys", seconds: 3600 };

const HEADER = "sign-in-with-x";

/** The JSON schema of a signed message, the same in every challenge: built once, not per 402. */
const SIWX_SCHEMA = buildSIWxSchema();

/** What a verifier throws when the chain cannot say whether a contract wallet signed: 503, not a refusal. */
export const CHAIN_UNREADABLE = "the chain cannot be read now to ask the wallet's contract";

/**
 * Sign-in with the wallet (x402's `sign-in-with-x` extension, CAIP-122 messages): a challenge in a 402's
 * PAYMENT-REQUIRED (`accepts` empty: nothing to pay, only to sign), and the signed message in SIGN-IN-WITH-X. A
 * challenge is bound to this deployment's origin and network; its nonce is an HMAC of its times and URI under the
 * deployment's secret (so no write is made to issue one, and a message with a nonce of its own, or altered times,
 * is refused), and is claimed in the database as it is used: single-use on every instance.
 */
export class WalletSignIn {
  constructor(private readonly terms: SignInTerms) {}

  /** The `sign-in-with-x` extension of a 402 for `resourceUrl`. */
  challenge(resourceUrl: string, now = Date.now()) {
    const url = new URL(resourceUrl);
    const issuedAt = new Date(now).toISOString();
    const expirationTime = new Date(now + this.terms.lifetimeSeconds * 1000).toISOString();
    const salt = randomBytes(8).toString("hex");
    return {
      [SIGN_IN_WITH_X]: {
        info: {
          domain: url.host,
          uri: resourceUrl,
          version: "1",
          nonce: salt + this.seal(salt, resourceUrl, issuedAt, expirationTime),
          issuedAt,
          expirationTime,
          statement: "Sign in to manage the prepaid keys this wallet paid for.",
          resources: [resourceUrl],
        },
        supportedChains: [{ chainId: this.terms.network, type: this.signatureType() }],
        schema: SIWX_SCHEMA,
      },
    };
  }

  /**
   * The wallet a request signed in as, for `resourceUrl`: undefined without SIGN-IN-WITH-X; throws a 401 naming
   * why a message is refused (malformed, another origin, another chain, expired, not our challenge, used before,
   * a bad signature).
   */
  async signedIn(request: ApiRequest, resourceUrl: string, now = Date.now()): Promise<WalletPrincipal | undefined> {
    const header = request.headers.get(HEADER);
    if (!header) return undefined;
    let payload: SIWxPayload;
    try {
      payload = parseSIWxHeader(header);
    } catch (error) {
      throw refused((error as Error).message);
    }
    const origin = new URL(resourceUrl);
    const valid = await validateSIWxMessage(payload, origin, { maxAge: this.terms.lifetimeSeconds * 1000 });
    if (!valid.isValid) throw refused(valid.invalidMessage);
    if (payload.chainId !== this.terms.network) {
      throw refused(`The message is for chain ${payload.chainId}; this deployment signs in on ${this.terms.network}.`);
    }
    if (!payload.expirationTime) throw refused("The message has no expirationTime: sign the challenge as issued.");
    // The library checks the URI's origin only: a message is for the one endpoint whose 402 issued it.
    if (new URL(payload.uri).pathname !== origin.pathname) {
      throw refused(`The message is for ${new URL(payload.uri).pathname}, not ${origin.pathname}.`);
    }
    const salt = payload.nonce.slice(0, 16);
    const seal = this.seal(salt, payload.uri, payload.issuedAt, payload.expirationTime);
    if (payload.nonce !== salt + seal)
      throw refused("The message's nonce, times or URI are not of a challenge issued here.");
    let verified;
    try {
      verified = await verifySIWxSignature(payload, { evmVerifier: this.terms.verifyMessage });
    } catch (error) {
      throw refused(`The signature cannot be checked: ${(error as Error).message}`);
    }
    if (!verified.isValid) {
      if (verified.invalidMessage.includes(CHAIN_UNREADABLE)) {
        throw new ApiError("service_unavailable", `Sign-in cannot be checked: ${CHAIN_UNREADABLE}; try again.`);
      }
      throw refused(verified.invalidMessage);
    }
    // Claimed last, once everything else holds: a refused message does not use up its challenge.
    const claim = randomBytes(12).toString("hex");
    const expiresAt = Date.parse(payload.expirationTime);
    if ((await this.terms.claims.hold(`sign-in nonce ${payload.nonce}`, claim, now, expiresAt)) !== claim) {
      throw refused("This signed message was used before: sign a new challenge for each request.");
    }
    return { kind: "wallet", address: walletOwner(verified.payer), chainId: payload.chainId };
  }

  /** A new browser session of a wallet signed in: its cookie value and expiry. */
  newSession(wallet: WalletPrincipal): Promise<Session & { value: string }> {
    return this.terms.sessions.open(WALLET_SESSION, this.terms.secretKey, wallet.address);
  }

  /** The wallet of the request's browser session, if it has an unexpired one of this deployment not signed out. */
  async fromSession(request: ApiRequest): Promise<WalletPrincipal | undefined> {
    const session = await this.terms.sessions.read(WALLET_SESSION, this.terms.secretKey, request.headers.get("cookie"));
    return session && { kind: "wallet", address: session.subject, chainId: this.terms.network };
  }

  /** Ends the sessions of the wallet whose session the request carries, in every browser (none without one). */
  signOut(request: ApiRequest): Promise<boolean> {
    return this.terms.sessions.end(WALLET_SESSION, this.terms.secretKey, request.headers.get("cookie"));
  }

  private seal(salt: string, uri: string, issuedAt: string, expirationTime: string): string {
    const bound = `${salt}|${uri}|${issuedAt}|${expirationTime}|${this.terms.network}`;
    return createHmac("sha256", this.terms.secretKey).update(bound).digest("hex").slice(0, 32);
  }

  private signatureType(): "eip191" | "ed25519" {
    return this.terms.network.startsWith("solana:") ? "ed25519" : "eip191";
  }
}

function refused(why: string): ApiError {
  return new ApiError("invalid_sign_in", `Sign-in refused: ${why}`);
}

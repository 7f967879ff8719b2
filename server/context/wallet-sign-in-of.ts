import { hashMessage } from "viem";
import type { ServiceConfig } from "../../config/service-config";
import type { LocalSignatureCheck } from "../payment/local-signature";
import { CHAIN_UNREADABLE, WalletSignIn } from "../auth/wallet-sign-in";
import type { SessionStore } from "../auth/session-store";
import type { Storage } from "../storage/storage";
import { deploymentSecret } from "../payment/quote-hold";

/** The name of the sign-ins' nonce secret (payment/quote-hold.ts's deploymentSecret). */
const SECRET_NAME = "sign-in secret";

/** How long a sign-in challenge may be signed and its message used: five minutes, SIWx's own default. */
const SIGN_IN_LIFETIME_SECONDS = 300;

/**
 * The deployment's wallet sign-in: bound to its network, its nonces sealed by a secret every instance shares and
 * claimed in its database. On EVM networks a signature is checked as a payment's is (payment/local-signature.ts):
 * the key's own signature recovered here, a contract wallet's (ERC-1271, or ERC-6492 not deployed yet) asked of the
 * chain, and only of an address with code; junk in the name of an account without code costs no chain call.
 */
export async function walletSignInOf(
  config: Pick<ServiceConfig, "network">,
  storage: Pick<Storage, "quoteHolds">,
  signatures: LocalSignatureCheck,
  sessions: SessionStore,
): Promise<WalletSignIn> {
  const secretKey = await deploymentSecret(storage.quoteHolds, SECRET_NAME);
  const { network } = config;
  const verifyMessage =
    network.kind === "evm"
      ? async ({ address, message, signature }: { address: string; message: string; signature: string }) => {
          const verdict = await signatures.checkHash(address.toLowerCase(), hashMessage(message), signature);
          if (verdict === "unknown") throw new Error(CHAIN_UNREADABLE);
          return verdict === "valid";
        }
      : undefined;
  return new WalletSignIn({
    secretKey,
    network: network.id,
    claims: storage.quoteHolds,
    verifyMessage,
    lifetimeSeconds: SIGN_IN_LIFETIME_SECONDS,
    sessions,
  });
}

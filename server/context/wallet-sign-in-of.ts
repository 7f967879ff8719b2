import { createPublicClient, http } from "viem";
import { chainFor } from "../../networks/viem-chain";
import { chainRpcUrlOf, type ServiceConfig } from "../../config/service-config";
import { WalletSignIn } from "../auth/wallet-sign-in";
import type { Storage } from "../storage/storage";
import { deploymentSecret } from "../payment/quote-hold";

/** The name of the sign-ins' nonce secret (payment/quote-hold.ts's deploymentSecret). */
const SECRET_NAME = "sign-in secret";

/** How long a sign-in challenge may be signed and its message used: five minutes, SIWx's own default. */
const SIGN_IN_LIFETIME_SECONDS = 300;

/**
 * The deployment's wallet sign-in: bound to its network, its nonces sealed by a secret every instance shares and
 * claimed in its database; on EVM networks a signature is checked over the chain (viem's verifyMessage: a
 * contract wallet's ERC-1271, a wallet not deployed yet's ERC-6492, else the key's own signature).
 */
export async function walletSignInOf(
  config: Pick<ServiceConfig, "network" | "chainRpcUrl">,
  storage: Pick<Storage, "quoteHolds">,
): Promise<WalletSignIn> {
  const secretKey = await deploymentSecret(storage.quoteHolds, SECRET_NAME);
  const { network } = config;
  const verifyMessage =
    network.kind === "evm"
      ? createPublicClient({ chain: chainFor(network, chainRpcUrlOf(config)), transport: http() }).verifyMessage
      : undefined;
  return new WalletSignIn({
    secretKey,
    network: network.id,
    claims: storage.quoteHolds,
    verifyMessage,
    lifetimeSeconds: SIGN_IN_LIFETIME_SECONDS,
  });
}

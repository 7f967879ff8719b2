import type { ServiceConfig } from "../../config/service-config";
import type { EvmNetwork, NetworkDefinition } from "../../networks";
import type { X402Payment } from "../billing/x402-payment";
import type { Storage } from "../storage/storage";
import { MppPayment } from "./mpp-payment";
import { deploymentSecret } from "../payment/quote-hold";

/** The name of the challenges' secret (payment/quote-hold.ts's deploymentSecret). */
const SECRET_NAME = "mpp challenge secret";

/** Whether a deployment on `network` offers MPP: on EVM networks. */
export function offersMpp(network: NetworkDefinition): network is EvmNetwork {
  return network.kind === "evm";
}

/**
 * MPP where the deployment's network has it: its EVM `charge` method on an EVM network; none on Solana (mppx's
 * charge methods there are not an x402 `exact` payment a facilitator settles). The challenges' secret is made by
 * the first instance to start over the database and read by every other, so that any instance takes a challenge
 * another issued, and no other deployment's.
 */
export async function mppMethod(
  config: ServiceConfig,
  storage: Storage,
  x402: X402Payment,
): Promise<MppPayment | undefined> {
  const { network } = config;
  if (!offersMpp(network)) return undefined;
  const secretKey = await deploymentSecret(storage.quoteHolds, SECRET_NAME);
  const terms = {
    secretKey,
    chainId: network.chainId,
    decimals: network.usdc.decimals,
    lifetimeSeconds: config.paymentTimeoutSeconds,
  };
  return new MppPayment(terms, x402);
}

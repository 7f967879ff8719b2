import { randomBytes } from "node:crypto";
import type { ServiceConfig } from "../../config/service-config";
import type { EvmNetwork, NetworkDefinition } from "../../networks";
import type { X402Payment } from "../billing/x402-payment";
import type { Storage } from "../storage/storage";
import { MppPayment } from "./mpp-payment";

/** Where the challenges' secret is kept: a held value that never expires, the first instance's kept by all. */
const SECRET_KEY = "mpp challenge secret";
const NEVER = Date.UTC(9999, 0, 1);

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
  const now = Date.now();
  const secretKey = await storage.quoteHolds.hold(SECRET_KEY, randomBytes(32).toString("base64url"), now, NEVER);
  const terms = {
    secretKey,
    chainId: network.chainId,
    decimals: network.usdc.decimals,
    lifetimeSeconds: config.paymentTimeoutSeconds,
  };
  return new MppPayment(terms, x402);
}

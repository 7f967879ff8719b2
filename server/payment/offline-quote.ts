import { x402ResourceServer } from "@x402/core/server";
import type { Network, PaymentRequirements } from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/server";
import type { NetworkDefinition } from "../../networks";

const servers = new Map<string, Promise<x402ResourceServer>>();

/**
 * A resource server for quoting while no facilitator answers: EVM `exact` terms (amount, asset, pay-to, the token's
 * EIP-712 domain) owe nothing to the facilitator, so they are built by the official server as any facilitator's
 * would build them, and a payment signed for them is verified once one answers. Its facilitator only says that.
 */
function offlineServer(network: NetworkDefinition): Promise<x402ResourceServer> {
  let server = servers.get(network.id);
  if (!server) {
    const refuse = () => Promise.reject(new Error("no facilitator: this server only quotes"));
    const facilitator = {
      verify: refuse,
      settle: refuse,
      getSupported: async () => ({
        kinds: [{ x402Version: 2, scheme: "exact", network: network.id as Network }],
        extensions: [],
        signers: {},
      }),
    };
    const built = new x402ResourceServer(facilitator).register(network.id as Network, new ExactEvmScheme());
    server = built.initialize().then(() => built);
    servers.set(network.id, server);
  }
  return server;
}

/** The `exact` requirements of these terms on an EVM network, built without a facilitator; undefined elsewhere. */
export async function offlineExactRequirements(
  network: NetworkDefinition,
  terms: { amount: bigint; payTo: string; maxTimeoutSeconds: number },
): Promise<PaymentRequirements | undefined> {
  if (network.kind !== "evm") return undefined;
  const server = await offlineServer(network);
  const [requirements] = await server.buildPaymentRequirements({
    scheme: "exact",
    network: network.id as Network,
    payTo: terms.payTo,
    maxTimeoutSeconds: terms.maxTimeoutSeconds,
    price: { amount: terms.amount.toString(), asset: network.usdc.address, extra: { ...network.usdc.eip712 } },
  });
  return requirements;
}

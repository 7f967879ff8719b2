import { chainRpcUrlOf, type ServiceConfig } from "../../config/service-config";
import { chainReaderFor } from "./chain-reader-for";
import { PaymentGateway, type PaymentGatewayConfig } from "./payment-gateway";

/**
 * The deployment's gateway, from its configuration: its facilitators in order, with their credentials and
 * breakers, and its chain (asked before a second facilitator settles a payment the first may have settled).
 */
export function gatewayFor(
  config: Pick<
    ServiceConfig,
    | "network"
    | "payTo"
    | "facilitators"
    | "facilitatorTimeoutMs"
    | "facilitatorBreaker"
    | "paymentTimeoutSeconds"
    | "upto"
    | "chainRpcUrl"
  >,
  observe?: PaymentGatewayConfig["observe"],
  channels?: PaymentGatewayConfig["channels"],
): PaymentGateway {
  return new PaymentGateway({
    network: config.network,
    payTo: config.payTo,
    facilitators: config.facilitators.map(({ name, url, auth }) => ({ name, url, auth })),
    facilitatorTimeoutMs: config.facilitatorTimeoutMs,
    facilitatorBreaker: config.facilitatorBreaker,
    paymentTimeoutSeconds: config.paymentTimeoutSeconds,
    upto: config.upto,
    channels,
    chain: chainReaderFor(config.network, chainRpcUrlOf(config)),
    observe,
  });
}

/**
 * The schemes a deployment offers: `exact`; on EVM networks `upto` where X402_UPTO is on, and `batch-settlement`
 * where channels are configured (config/channels.ts).
 */
export function offeredSchemes(config: Pick<ServiceConfig, "network" | "upto" | "channels">): string[] {
  if (config.network.kind !== "evm") return ["exact"];
  return ["exact", ...(config.upto ? ["upto"] : []), ...(config.channels ? ["batch-settlement"] : [])];
}

import type { FacilitatorRoute } from "./facilitator-route";
import { FacilitatorCallError } from "./facilitator-route";
import type { PaymentGateway } from "./payment-gateway";

/** What one facilitator said of itself when asked /supported with its credentials. */
export interface FacilitatorCapability {
  name: string;
  url: string | undefined;
  /** answered; credentials refused (401/403); not reached; or answered something else than a list. */
  reached: "answered" | "credentials_rejected" | "unreachable" | "failed";
  /** Whether it lists this deployment's network under any scheme. */
  network: boolean;
  /** Each scheme the deployment offers, and whether it lists it on the network (x402 v2). */
  schemes: Record<string, boolean>;
  /** One line for a person. */
  summary: string;
}

/**
 * Asks every facilitator of the gateway for /supported, with its credentials, and says per facilitator whether it
 * was reached, took the credentials, lists the network and each scheme the deployment offers (`exact`, and `upto`
 * where offered). The deployment can take payments when one of them lists `exact` (see `takesPayments`).
 */
export async function checkFacilitators(
  gateway: PaymentGateway,
  offered: readonly string[],
): Promise<FacilitatorCapability[]> {
  return Promise.all(gateway.routes.map((route) => capabilityOf(route, gateway.network.id, offered)));
}

async function capabilityOf(
  route: FacilitatorRoute,
  network: string,
  offered: readonly string[],
): Promise<FacilitatorCapability> {
  const base = { name: route.name, url: route.url, network: false, schemes: {} as Record<string, boolean> };
  try {
    const supported = await route.probe();
    const kinds = supported.kinds.filter((kind) => kind.x402Version === 2 && kind.network === network);
    const schemes = Object.fromEntries(offered.map((scheme) => [scheme, kinds.some((kind) => kind.scheme === scheme)]));
    const listsNetwork = supported.kinds.some((kind) => kind.network === network);
    const listed = offered.map((scheme) => `${scheme} ${schemes[scheme] ? "yes" : "no"}`).join(", ");
    const summary = listsNetwork
      ? `${network}: ${listed}`
      : `does not list ${network} (it lists ${[...new Set(supported.kinds.map((kind) => kind.network))].join(", ") || "nothing"})`;
    return { ...base, reached: "answered", network: listsNetwork, schemes, summary };
  } catch (error) {
    const status = error instanceof FacilitatorCallError ? error.status : undefined;
    if (status === 401 || status === 403) {
      return { ...base, reached: "credentials_rejected", summary: `credentials rejected (${status})` };
    }
    const unreached = error instanceof FacilitatorCallError && error.unreached;
    const cause = error instanceof FacilitatorCallError ? (error.cause as Error).message : (error as Error).message;
    return {
      ...base,
      reached: unreached ? "unreachable" : "failed",
      summary: `${unreached ? "not reachable" : "failed"}: ${cause}`,
    };
  }
}

/** Whether some facilitator lists `exact` on the network: payments can be taken. */
export function takesPayments(capabilities: readonly FacilitatorCapability[]): boolean {
  return capabilities.some((capability) => capability.schemes.exact === true);
}

/** Health probe of one facilitator: it answers /supported and lists this network's exact scheme. */
export async function probeFacilitator(route: FacilitatorRoute, network: string): Promise<void> {
  const supported = await route.probe().catch((error: unknown) => {
    const status = error instanceof FacilitatorCallError ? error.status : undefined;
    if (status === 401 || status === 403) throw new Error(`credentials rejected (${status})`);
    throw error;
  });
  const listed = supported.kinds.some((kind) => kind.network === network && kind.scheme === "exact");
  if (!listed) throw new Error(`facilitator does not support exact payments on ${network}`);
}

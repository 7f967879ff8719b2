import type { ModelCatalog } from "../../config/catalog/model-catalog";
import type { NetworkDefinition } from "../../networks";
import type { CatalogEndpoint } from "./catalog-endpoint";

/** What the discovery documents of one deployment depend on. */
export interface DeploymentFacts {
  /** Public origin, without a trailing slash. */
  origin: string;
  network: NetworkDefinition;
  payTo: string;
  prepaidApiBase: string;
  paymentTimeoutSeconds: number;
  /** The endpoints the documents describe. */
  catalog: readonly CatalogEndpoint[];
  /** The models sold and their prices: the catalog in force. */
  models: ModelCatalog;
  /** `upto` is offered beside `exact` (EVM, where the facilitator settles it). */
  upto: boolean;
  /** `batch-settlement` channels are offered (EVM, configured; where the facilitator lists them). */
  channels: boolean;
  /** MPP's evm charge is offered beside x402 (EVM networks). */
  mpp: boolean;
}

/** The schemes a paid endpoint of this deployment takes. */
export function schemesOf(facts: DeploymentFacts, endpoint: CatalogEndpoint): NonNullable<CatalogEndpoint["schemes"]> {
  const offered = { exact: true, upto: facts.upto, "batch-settlement": facts.channels };
  return (endpoint.schemes ?? ["exact"]).filter((scheme) => offered[scheme]);
}

export function paymentInfo(facts: DeploymentFacts) {
  return {
    protocol: "x402",
    x402Version: 2,
    scheme: "exact",
    network: facts.network.id,
    asset: facts.network.usdc.address,
    assetDecimals: facts.network.usdc.decimals,
    payTo: facts.payTo,
    maxTimeoutSeconds: facts.paymentTimeoutSeconds,
    extra:
      facts.network.kind === "evm"
        ? { ...facts.network.usdc.eip712 }
        : { feePayer: "the facilitator's fee payer, named in each 402's accepts[0].extra.feePayer" },
    settlementOverheadUsd: facts.network.settlementOverheadUsd,
    settlementGas: facts.network.settlementGas
      ? "a live estimate of settlement gas is added to every quote"
      : "included in the overhead",
  };
}

import type { ImageModel } from "../../config/catalog/model-catalog";
import type { NetworkDefinition } from "../../networks";
import { atomicToDecimal, decimalToAtomic } from "../core/money";
import { chargeFor } from "./charge";

/** The listed price per image x n, plus the settlement overhead (0.001 USD), in atomic units. */
export function quoteImages(model: ImageModel, size: string, n: number, network: NetworkDefinition) {
  const decimals = network.usdc.decimals;
  const images = decimalToAtomic(model.usdPerImage, decimals) * BigInt(n);
  const amount = chargeFor(images, network);
  return {
    amount,
    display: {
      model: model.id,
      size,
      n,
      usd_per_image: model.usdPerImage,
      images_usd: atomicToDecimal(images, decimals),
      settlement_overhead_usd: network.settlementOverheadUsd,
      total_usd: atomicToDecimal(amount, decimals),
      amount: amount.toString(),
      asset_decimals: decimals,
    },
  };
}

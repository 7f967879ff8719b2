import type { ChatModel } from "../../config/catalog/model-catalog";

/** The price of one request, computed before any work: the same body on the same network gives the same quote. */
export interface Quote {
  amount: bigint;
  /** Display breakdown, sent as the 402's `extensions.quote`. */
  display: Record<string, unknown>;
  /** The payment's description in the 402. */
  description: string;
  /** The model the call uses (a pack's model for a prepaid key), for the metrics. */
  model: string;
  /**
   * For calls that may be billed in tokens to a prepaid key: the model, the counted input, the output cap, and the
   * decimals of the network's USDC (a prepaid answer states what its tokens are worth in them).
   */
  tokens?: { model: ChatModel; input: number; maxOutput: number; decimals: number };
}

import { batchSettlementScheme } from "./batch-settlement-scheme";
import { exactScheme } from "./exact-scheme";
import type { PaymentScheme } from "./payment-scheme";
import { uptoScheme } from "./upto-scheme";

/** The x402 schemes paysvc takes, in the order a 402 offers them (`exact` first, for clients that take the first). */
export const PAYMENT_SCHEMES: readonly PaymentScheme[] = [exactScheme, uptoScheme, batchSettlementScheme];

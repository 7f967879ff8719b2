import type { ServiceConfig } from "../../config/service-config";
import { PaymentMethods } from "../billing/payment-methods";
import { prepaidKeyMethod } from "../prepaid/prepaid-payment";
import { X402Payment, type X402PaymentOptions } from "../billing/x402-payment";
import { mppMethod } from "../mpp/mpp-method";
import type { Storage } from "../storage/storage";

/**
 * The deployment's payment methods, in the order a request's credential is looked for: a prepaid key (where the
 * endpoint takes one), x402, then MPP (EVM networks). A method is its folder and a line here.
 */
export async function paymentMethods(
  config: ServiceConfig,
  storage: Storage,
  x402Options: X402PaymentOptions,
): Promise<PaymentMethods> {
  const { metrics, writes } = x402Options;
  const x402 = new X402Payment(x402Options);
  const methods = new PaymentMethods(x402)
    .register(
      prepaidKeyMethod({
        prepaidKeys: storage.prepaidKeys,
        reservationTtlMs: config.prepaid.reservationTtlMs,
        metrics,
        writes,
      }),
    )
    .register(x402);
  const mpp = await mppMethod(config, storage, x402);
  if (mpp) methods.register(mpp);
  return methods;
}

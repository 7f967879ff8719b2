import { PERMIT2_ADDRESS } from "@x402/evm";
import { PAYER_HOLD_EXPIRY_MS, SPONSORED_PERMIT_WAIT_MS } from "../../../config/limits";
import { atomicToDecimal } from "../../money";
import type { PayerFunds } from "../../payment/payer-funds";
import type { DecodedPayment } from "../../payment/payment-signature";
import type { Acceptance, PaymentScheme } from "./payment-scheme";

/**
 * What accepting a payment did about its payer's exposure: `held` (its maximum counts against what the payer can
 * pay until `release`), `none` (it needs no hold: it is settled before any byte goes out), `strict` (it did not fit:
 * it must be settled before the first byte), or `over` (an `upto` payment that did not fit: it is refused, `message`
 * naming the limit).
 */
export type Exposure =
  | { kind: "held"; release(): Promise<void> }
  | { kind: "none" }
  | { kind: "strict" }
  | { kind: "over"; message: string };

/** How often a payment waiting for a sponsored permit to land looks again. */
const WAIT_STEP_MS = 100;

/**
 * Whether a payment's settlement can come after bytes of its answer go out, so that its maximum is credit: `upto`
 * always (a stream is settled on its usage; a whole answer after the work, which a refused settlement wastes), an
 * `exact` stream passed on while it settles (overlap order). Everything else is settled before its answer leaves.
 */
export function needsHold(scheme: PaymentScheme, acceptance: Acceptance, overlapped: boolean): boolean {
  if (scheme.name === "upto") return true;
  return scheme.name === "exact" && overlapped && acceptance.call.streams === true;
}

/**
 * Holds `payment`'s signed maximum against what its payer can pay: the balance read now and, for `upto`, the
 * Permit2 allowance (or the EIP-2612 permit the payment carries for it, when the allowance is short and the permit
 * can still apply). Of a first-time payer's `upto` payments each carrying a permit, one is in flight at a time: the
 * others wait, up to SPONSORED_PERMIT_WAIT_MS, for it to land and are judged on what it left.
 */
export async function holdExposure(
  acceptance: Acceptance,
  scheme: PaymentScheme,
  payment: DecodedPayment,
): Promise<Exposure> {
  const { services, priced } = acceptance;
  const store = services.payerHolds;
  const upto = scheme.name === "upto";
  const permit = upto ? sponsoredPermit(payment) : undefined;
  const amount = priced.amount;
  const read = () => services.funds.read(payment.payer, { permit2: upto, permitNonce: permit !== undefined });
  const decimals = services.gateway.network.usdc.decimals;
  const usd = (units: bigint) => `${atomicToDecimal(units, decimals)} USD`;
  const started = Date.now();
  for (;;) {
    const funds = await read();
    if (!funds) {
      if (!upto) return { kind: "strict" };
      return {
        kind: "over",
        message: `This upto payment is settled after its answer, so the payer's USDC balance and Permit2 allowance must cover it, and they cannot be read from the chain now; try again, or pay with exact`,
      };
    }
    const { capacity, sponsored } = capacityOf(funds, upto, permit, payment.payer);
    const key = payment.nonce;
    const now = Date.now();
    const expiresAt = payment.deadline !== undefined ? payment.deadline * 1000 + 60_000 : now + PAYER_HOLD_EXPIRY_MS;
    const hold = { key, payer: payment.payer, amount, capacity, sponsored, expiresAt };
    if (await store.hold(hold, now)) return { kind: "held", release: () => store.release(key) };
    if (!upto) return { kind: "strict" };
    const held = await store.heldBy(payment.payer, Date.now());
    if (held.sponsored && Date.now() - started < SPONSORED_PERMIT_WAIT_MS) {
      await waitForPermit(store, payment.payer, started);
      continue;
    }
    const allowance = funds.permit2Allowance ?? 0n;
    return {
      kind: "over",
      message: `Payer limit: this upto payment may settle up to ${usd(amount)} after its answer, and the payer can pay ${usd(capacity)} (USDC balance ${usd(funds.balance)}, Permit2 allowance ${usd(sponsored ? capacity : allowance)}) of which ${usd(held.amount)} is held by its payments in flight; wait for them to end, approve Permit2 for more, or pay with exact`,
    };
  }
}

/** Waits until no permit-sponsored hold of the payer is live, or the wait's time is up. */
async function waitForPermit(
  store: Acceptance["services"]["payerHolds"],
  payer: string,
  started: number,
): Promise<void> {
  while (Date.now() - started < SPONSORED_PERMIT_WAIT_MS) {
    await new Promise((resolve) => setTimeout(resolve, WAIT_STEP_MS));
    if (!(await store.heldBy(payer, Date.now())).sponsored) return;
  }
}

/**
 * What the payer can pay for this payment: its balance; for `upto`, no more than Permit2 may move: its allowance,
 * or the permit's value where the permit would raise it and can still apply (the token's next nonce is the permit's).
 */
function capacityOf(
  funds: PayerFunds,
  upto: boolean,
  permit: SponsoredPermit | undefined,
  payer: string,
): { capacity: bigint; sponsored: boolean } {
  if (!upto) return { capacity: funds.balance, sponsored: false };
  const allowance = funds.permit2Allowance ?? 0n;
  const applies =
    permit !== undefined &&
    permit.from.toLowerCase() === payer.toLowerCase() &&
    permit.spender.toLowerCase() === PERMIT2_ADDRESS.toLowerCase() &&
    permit.nonce === funds.permitNonce &&
    permit.amount > allowance;
  const allowed = applies ? permit.amount : allowance;
  return { capacity: allowed < funds.balance ? allowed : funds.balance, sponsored: applies };
}

interface SponsoredPermit {
  from: string;
  spender: string;
  amount: bigint;
  nonce: bigint;
}

/** The EIP-2612 permit for Permit2 an `upto` payment carries (its eip2612GasSponsoring extension), if any. */
function sponsoredPermit(payment: DecodedPayment): SponsoredPermit | undefined {
  const extensions = (payment.payload as { extensions?: Record<string, { info?: Record<string, unknown> }> })
    .extensions;
  const info = extensions?.eip2612GasSponsoring?.info;
  if (!info) return undefined;
  const { from, spender, amount, nonce } = info;
  if (typeof from !== "string" || typeof spender !== "string") return undefined;
  if (typeof amount !== "string" || !/^\d{1,78}$/.test(amount)) return undefined;
  if (typeof nonce !== "string" || !/^\d{1,78}$/.test(nonce)) return undefined;
  return { from, spender, amount: BigInt(amount), nonce: BigInt(nonce) };
}

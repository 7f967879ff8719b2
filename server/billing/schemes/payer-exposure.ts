import { PERMIT2_ADDRESS } from "@x402/evm";
import { PAYER_HOLD_EXPIRY_MS, SETTLED_FIRST_WAIT_MS, SPONSORED_PERMIT_WAIT_MS } from "../../../config/limits";
import { atomicToDecimal } from "../../core/money";
import type { PayerFunds } from "../../payment/payer-funds";
import type { LiveHolds } from "../../payment/payer-holds";
import type { DecodedPayment } from "../../payment/payment-signature";
import type { Acceptance, PaymentScheme, SchemeServices } from "./payment-scheme";

/**
 * What holding a payment's maximum came to: `held` (it counts against what the payer can pay until `release`), or
 * `over` (it does not fit, or the payer's funds cannot be read: `message` names the limit). An `exact` stream over
 * the limit is settled before its first byte (holdSettledFirst); an `upto` payment or a channel's deposit is refused.
 */
export type Exposure = HeldExposure | { kind: "over"; message: string };

/** A payment's hold on its payer's funds: ended once it is taken, lowered to what it takes as it is taken. */
export interface HeldExposure {
  kind: "held";
  release(): Promise<void>;
  lower(amount: bigint): Promise<void>;
}

/** The hold under `key`, as its payment ends or lowers it. */
function heldExposure(store: SchemeServices["payerHolds"], key: string): HeldExposure {
  return { kind: "held", release: () => store.release(key), lower: (taken) => store.lower(key, taken) };
}

/** A payment's claim on its payer's funds: its maximum, and what limits it beyond the balance. */
export interface ExposureRequest {
  /** The hold's key: the payment's ledger nonce, or a deposit's own. */
  key: string;
  payer: string;
  amount: bigint;
  /** Settled through Permit2 (`upto`): the allowance limits it too. */
  permit2: boolean;
  /** Unix seconds after which the payment cannot be settled: the hold outlives it by a minute at most. */
  deadline?: number;
  /** The EIP-2612 permit for Permit2 the payment carries, if any. */
  permit?: SponsoredPermit;
}

/** How often a payment waiting for a sponsored permit to land looks again. */
const WAIT_STEP_MS = 100;

/**
 * Whether a payment's settlement can come after bytes of its answer go out, so that its maximum is credit: `upto`
 * always (a stream is settled on its usage; a whole answer after the work, which a refused settlement wastes), an
 * `exact` stream passed on while it settles (overlap order). Everything else is settled before its answer leaves.
 */
export function needsHold(scheme: PaymentScheme, acceptance: Acceptance, overlapped: boolean): boolean {
  if (scheme.chargesUse) return true;
  return overlapped && acceptance.call.streams === true;
}

/** What an `exact` or `upto` payment claims of its payer's funds. */
export function signedExposure(scheme: PaymentScheme, payment: DecodedPayment, amount: bigint): ExposureRequest {
  // A signed payment charged its use is upto's: a Permit2 transfer, maybe with a sponsored permit.
  const upto = scheme.chargesUse;
  const { nonce: key, payer, deadline } = payment;
  return { key, payer, amount, permit2: upto, deadline, permit: upto ? sponsoredPermit(payment) : undefined };
}

/**
 * Holds a payment's maximum against what its payer can pay: the balance read now and, through Permit2, the
 * allowance (or the EIP-2612 permit the payment carries for it, when the allowance is short and the permit can still
 * apply). Of a first-time payer's `upto` payments each carrying a permit, one is in flight at a time: the others
 * wait, up to SPONSORED_PERMIT_WAIT_MS, for it to land and are judged on what it left.
 */
export async function holdExposure(services: SchemeServices, request: ExposureRequest): Promise<Exposure> {
  const store = services.payerHolds;
  const { key, payer, amount, permit2, permit } = request;
  const usd = usdOf(services);
  const started = Date.now();
  for (;;) {
    // The payer's ended holds are summed before its funds are read: those that end after count as still held (their
    // settlements may have spent the funds read, or not yet).
    const before = await store.heldBy(payer, Date.now());
    const funds = await services.funds.read(payer, { permit2, permitNonce: permit !== undefined });
    if (!funds) {
      return {
        kind: "over",
        message: `This payment is settled after its answer goes out, so the payer's USDC balance${permit2 ? " and Permit2 allowance" : ""} must cover it, and they cannot be read from the chain now; try again, or pay with exact`,
      };
    }
    const { capacity, sponsored } = capacityOf(funds, permit2, permit, payer);
    const now = Date.now();
    const expiresAt = holdExpiry(request.deadline, now);
    const endedAmountBefore = before.endedAmount;
    if (await store.hold({ key, payer, amount, capacity, sponsored, endedAmountBefore, expiresAt }, now)) {
      return heldExposure(store, key);
    }
    const held = await store.heldBy(payer, Date.now());
    const waited = Date.now() - started;
    // Holds that ended meanwhile were counted as live: the funds read again will tell.
    if (held.ended !== before.ended && waited < SPONSORED_PERMIT_WAIT_MS) continue;
    if (permit2 && held.sponsored && waited < SPONSORED_PERMIT_WAIT_MS) {
      // Until no permit-sponsored hold of the payer is live.
      await waitForHolds(store, payer, started, SPONSORED_PERMIT_WAIT_MS, (live) => !live.sponsored);
      continue;
    }
    const allowance = permit2
      ? `, Permit2 allowance ${usd(sponsored ? capacity : (funds.permit2Allowance ?? 0n))}`
      : "";
    return {
      kind: "over",
      message: `Payer limit: this payment may settle up to ${usd(amount)} after its answer goes out, and the payer can pay ${usd(capacity)} (USDC balance ${usd(funds.balance)}${allowance}) of which ${usd(held.amount)} is held by its payments in flight; wait for them to end, ${permit2 ? "approve Permit2 for more, " : ""}or pay with exact`,
    };
  }
}

/**
 * Holds a payment settled before its answer leaves (an `exact` payment not held as credit), so that its settlement
 * cannot spend what another payment's hold counts on (that payment's answer would go out unpaid): taken with no
 * chain read while the payer holds nothing else; beside other holds only if the balance covers them all; else it
 * waits, up to SETTLED_FIRST_WAIT_MS, for them to end. Only EVM networks read funds and hold credit: elsewhere
 * there is nothing to hold against (undefined).
 */
export async function holdSettledFirst(
  services: SchemeServices,
  request: Omit<ExposureRequest, "permit2" | "permit">,
): Promise<Exposure | undefined> {
  if (services.gateway.network.kind !== "evm") return undefined;
  const store = services.payerHolds;
  const { key, payer, amount } = request;
  const expiresAt = () => holdExpiry(request.deadline, Date.now());
  const held = heldExposure(store, key);
  const started = Date.now();
  for (;;) {
    if (await store.hold({ key, payer, amount, sponsored: false, expiresAt: expiresAt() }, Date.now())) return held;
    const before = await store.heldBy(payer, Date.now());
    const funds = await services.funds.read(payer);
    const capacity = funds?.balance;
    const endedAmountBefore = before.endedAmount;
    const hold = { key, payer, amount, capacity, endedAmountBefore, sponsored: false, expiresAt: expiresAt() };
    if (funds && (await store.hold(hold, Date.now()))) return held;
    if (Date.now() - started >= SETTLED_FIRST_WAIT_MS)
      return settledFirstOver(services, amount, capacity, before.amount);
    // Until one of the payer's holds has ended (since its funds were read).
    await waitForHolds(store, payer, started, SETTLED_FIRST_WAIT_MS, (live) => live.ended !== before.ended);
  }
}

/** Why a payment settled first is refused: it would spend what its payer's payments in flight count on. */
function settledFirstOver(
  services: SchemeServices,
  amount: bigint,
  balance: bigint | undefined,
  held: bigint,
): Exposure {
  const usd = usdOf(services);
  const funds =
    balance === undefined
      ? "the payer's USDC balance cannot be read from the chain now"
      : `the payer's USDC balance is ${usd(balance)}`;
  return {
    kind: "over",
    message: `Payer limit: this payment of ${usd(amount)} would be settled while the payer's payments in flight hold ${usd(held)} of its funds, and ${funds}; wait for them to end, or fund the wallet`,
  };
}

/** Waits, looking at the payer's live holds every WAIT_STEP_MS, until `over(live)` or `waitMs` from `started`. */
async function waitForHolds(
  store: SchemeServices["payerHolds"],
  payer: string,
  started: number,
  waitMs: number,
  over: (live: LiveHolds) => boolean,
): Promise<void> {
  while (Date.now() - started < waitMs) {
    await new Promise((resolve) => setTimeout(resolve, WAIT_STEP_MS));
    if (over(await store.heldBy(payer, Date.now()))) return;
  }
}

/** When a hold ends by itself if its process dies: a minute after its payment's deadline, else PAYER_HOLD_EXPIRY_MS. */
function holdExpiry(deadline: number | undefined, now: number): number {
  return deadline !== undefined ? deadline * 1000 + 60_000 : now + PAYER_HOLD_EXPIRY_MS;
}

/** Amounts of the network's USDC as messages name them. */
function usdOf(services: SchemeServices): (units: bigint) => string {
  const { decimals } = services.gateway.network.usdc;
  return (units) => `${atomicToDecimal(units, decimals)} USD`;
}

/**
 * What the payer can pay for this payment: its balance; for `upto`, no more than Permit2 may move: its allowance,
 * or the permit's value where the permit would raise it and can still apply (the token's next nonce is the permit's).
 */
function capacityOf(
  funds: PayerFunds,
  permit2: boolean,
  permit: SponsoredPermit | undefined,
  payer: string,
): { capacity: bigint; sponsored: boolean } {
  if (!permit2) return { capacity: funds.balance, sponsored: false };
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

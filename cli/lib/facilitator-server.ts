import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { createKeyPairSignerFromBytes, getBase58Encoder } from "@solana/kit";
import { x402Facilitator } from "@x402/core/facilitator";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import {
  BATCH_SETTLEMENT_ADDRESS,
  ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
  PERMIT2_ADDRESS,
  toFacilitatorEvmSigner,
  x402UptoPermit2ProxyAddress,
} from "@x402/evm";
import { BatchSettlementEvmScheme } from "@x402/evm/batch-settlement/facilitator";
import { registerExactEvmScheme } from "@x402/evm/exact/facilitator";
import { UptoEvmScheme } from "@x402/evm/upto/facilitator";
import { EIP2612_GAS_SPONSORING } from "@x402/extensions";
import { toFacilitatorSvmSigner } from "@x402/svm";
import { registerExactSvmScheme } from "@x402/svm/exact/facilitator";
import { createPublicClient, createWalletClient, http, publicActions } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { createNonceManager, jsonRpc } from "viem/nonce";
import type { FacilitatorAuth } from "../../config/facilitators";
import type { BuiltInFacilitator } from "../../config/start-config";
import type { EvmNetwork, NetworkDefinition, SvmNetwork } from "../../networks";
import { listen, readJson, sendJson, type JsonHttpServer } from "./json-http-server";
import { chainFor } from "../../networks/viem-chain";

interface FacilitatorOptions<N extends NetworkDefinition> {
  network: N;
  /**
   * Who it serves: requests that carry `Authorization: Bearer <secret>` (its own app's, handed over at start), and
   * only for payments to `payTo`. Anyone else reaching its port could otherwise have it verify their payments, or
   * settle them with gas paid from `privateKey`. Without `payTo` it serves any pay-to, as a public facilitator
   * does: the development world's, which every deployment of its stack shares.
   */
  access: { secret: string; payTo?: string };
  rpcUrl: string;
  /** EVM: 0x-hex private key. Solana: base58 64-byte keypair of the fee payer. */
  privateKey: string;
  /** The chain is the embedded one, which makes a block for each transaction as it arrives. */
  embeddedChain: boolean;
  /**
   * EVM: the factories it may call to deploy a payer's contract wallet that signed with ERC-6492 before it existed
   * (none: such payments are refused).
   */
  walletFactories?: string[];
}

/** How often the embedded chain is asked for a receipt: it has one as soon as the transaction is sent. */
const EMBEDDED_CHAIN_POLLING_MS = 20;

/**
 * How often an EVM settlement looks for its receipt (and how long the block number is cached): a quarter of the
 * network's block time, so a settlement returns within a quarter block of its transaction's block. viem's default
 * without a block time is every 4 s, a whole extra wait for any receipt not there at the first look.
 */
function receiptPollingMs(network: EvmNetwork, embeddedChain: boolean): number {
  return embeddedChain ? EMBEDDED_CHAIN_POLLING_MS : Math.max(100, Math.floor(network.blockTimeMs / 4));
}

/**
 * The built-in facilitator, served over HTTP on 127.0.0.1 (POST /verify, POST /settle, GET /supported) exactly as
 * a remote one is, built on the official x402 facilitator and its "exact" scheme for the network, and on EVM
 * networks its "upto" scheme too, where Permit2 and the x402 upto proxy are deployed (always on the embedded chain,
 * which has our own; on a real chain if both have code there at start): /supported then lists `upto` with
 * `extra.facilitatorAddress` and the `eip2612GasSponsoring` extension. It pays settlement fees (EVM gas, or the
 * Solana fee payer's SOL) from `privateKey`. `paysvc start` runs it on a real chain (CHAIN_RPC_URL) when no
 * FACILITATOR_URL is given; `paysvc dev` runs it on the embedded chain.
 */
export async function startFacilitatorServer(
  options: FacilitatorOptions<NetworkDefinition> & { port: number },
): Promise<JsonHttpServer & { address: string }> {
  const { network } = options;
  const { facilitator, address } =
    network.kind === "evm"
      ? await evmFacilitator({ ...options, network })
      : await svmFacilitator({ ...options, network });

  // Settlements one at a time: they all pay from one account, whose transactions must go out in nonce order, and
  // each is then checked against the state the one before it left (a payer's second spend fails cleanly as
  // `success: false` instead of racing the first into an error whose outcome the app cannot know).
  let previous: Promise<unknown> = Promise.resolve();
  const inTurn = <T>(run: () => Promise<T>): Promise<T> => {
    const next = previous.then(run, run);
    previous = next.catch(() => undefined);
    return next;
  };

  const server = await listen(
    async (request, response) => {
      const path = (request.url ?? "/").split("?")[0];
      if (!carriesSecret(request, options.access.secret)) {
        // Its body unread: the connection is closed rather than kept for bytes nobody will read.
        response.setHeader("connection", "close");
        return sendJson(response, 401, { error: "this facilitator serves its own app only: Authorization required" });
      }
      if (request.method === "GET" && path === "/supported") {
        return sendJson(response, 200, facilitator.getSupported());
      }
      if (request.method === "POST" && (path === "/verify" || path === "/settle")) {
        let body: { paymentPayload?: PaymentPayload; paymentRequirements?: PaymentRequirements };
        try {
          body = (await readJson(request)) as typeof body;
        } catch {
          return sendJson(response, 400, { error: "request body must be JSON" });
        }
        if (!body.paymentPayload || !body.paymentRequirements) {
          return sendJson(response, 400, { error: "paymentPayload and paymentRequirements are required" });
        }
        const { paymentPayload, paymentRequirements } = body;
        const { payTo } = options.access;
        if (payTo !== undefined && !paysUs(network, paymentRequirements.payTo, payTo)) {
          return sendJson(response, 403, refusal(path, network, `this facilitator settles only payments to ${payTo}`));
        }
        const result =
          path === "/verify"
            ? await facilitator.verify(paymentPayload, paymentRequirements)
            : await inTurn(() => facilitator.settle(paymentPayload, paymentRequirements));
        return sendJson(response, 200, result);
      }
      sendJson(response, 404, { error: "not found" });
    },
    options.port,
    "built-in facilitator",
  );
  return { ...server, address };
}

/** Whether a request carries the secret, compared in constant time. */
function carriesSecret(request: IncomingMessage, secret: string): boolean {
  const digest = (text: string) => createHash("sha256").update(text).digest();
  return timingSafeEqual(digest(request.headers.authorization ?? ""), digest(`Bearer ${secret}`));
}

/** Whether requirements pay `payTo` (EVM addresses in any case; Solana's are case-sensitive). */
function paysUs(network: NetworkDefinition, requirementsPayTo: unknown, payTo: string): boolean {
  if (typeof requirementsPayTo !== "string") return false;
  return network.kind === "evm" ? requirementsPayTo.toLowerCase() === payTo.toLowerCase() : requirementsPayTo === payTo;
}

/** A refusal in the shape of the operation's answer, so that a client reads it as a verdict (403), not a failure. */
function refusal(path: string, network: NetworkDefinition, message: string) {
  const reason = "pay_to_not_served";
  return path === "/verify"
    ? { isValid: false, invalidReason: reason, invalidMessage: message }
    : { success: false, errorReason: reason, errorMessage: message, transaction: "", network: network.id };
}

/** A fresh secret for a facilitator's own app, and the credentials the app sends it with. */
export function facilitatorAccess(payTo?: string) {
  const secret = randomBytes(32).toString("hex");
  const auth: FacilitatorAuth = { kind: "header", name: "Authorization", value: `Bearer ${secret}` };
  return { secret, payTo, auth, header: `${auth.name}: ${auth.value}` };
}

/** Credentials given as FACILITATOR_*_AUTH_HEADER gives them (`Name: value`), as a facilitator entry takes them. */
export function headerAuth(line: string): Extract<FacilitatorAuth, { kind: "header" }> {
  const colon = line.indexOf(":");
  return { kind: "header", name: line.slice(0, colon).trim(), value: line.slice(colon + 1).trim() };
}

/**
 * The built-in facilitator of a deployment that has no FACILITATOR_URL, on the operator's chain (CHAIN_RPC_URL)
 * and paying from FACILITATOR_PRIVATE_KEY, on a free port: what `paysvc start` runs beside the app, and what
 * `paysvc ledger reconcile` runs for its settlements. It serves payments to PAY_TO only, from whoever holds the
 * credentials it returns (`auth`, as a facilitator entry takes them; `header`, as FACILITATOR_*_AUTH_HEADER does).
 */
export async function startBuiltInFacilitator(network: NetworkDefinition, builtIn: BuiltInFacilitator) {
  const access = facilitatorAccess(builtIn.payTo);
  const server = await startFacilitatorServer({
    network,
    rpcUrl: builtIn.rpcUrl,
    privateKey: builtIn.privateKey,
    port: 0,
    embeddedChain: false,
    access,
  });
  return { ...server, auth: access.auth, header: access.header };
}

async function evmFacilitator(options: FacilitatorOptions<EvmNetwork>) {
  // One nonce sequence for every settlement: concurrent settles from one account must not reuse a nonce. It is this
  // facilitator's own: viem's shared manager keys its sequences by address and chain id only, so two facilitators
  // of one process settling from one account on two chains of the same id (the tests' stacks) would share one.
  const account = privateKeyToAccount(options.privateKey as `0x${string}`, {
    nonceManager: createNonceManager({ source: jsonRpc() }),
  });
  const pollingInterval = receiptPollingMs(options.network, options.embeddedChain);
  const client = createWalletClient({
    account,
    chain: chainFor(options.network, options.rpcUrl),
    transport: http(options.rpcUrl),
    pollingInterval,
    cacheTime: pollingInterval,
  }).extend(publicActions);
  // viem's newer verifyTypedData overloads are wider than the signer type @x402/evm declares; the runtime shape
  // is exactly what it expects (its own docs pass a viem client extended with public actions).
  type SignerClient = Parameters<typeof toFacilitatorEvmSigner>[0];
  const signer = toFacilitatorEvmSigner({ ...client, address: account.address } as unknown as SignerClient);
  const facilitator = registerExactEvmScheme(new x402Facilitator(), {
    signer,
    networks: options.network.id,
    eip6492AllowedFactories: options.walletFactories ?? [],
  });
  if (options.embeddedChain || (await deployed(options, [PERMIT2_ADDRESS, x402UptoPermit2ProxyAddress]))) {
    // The payer signs for this account, the only one the proxy lets settle: /supported names it as
    // `extra.facilitatorAddress`. A payer without a Permit2 allowance may sign an EIP-2612 permit of the token to
    // Permit2 instead, which the settlement applies first (this account pays its gas): /supported names that
    // extension so that a server knows it may declare it.
    facilitator.register(options.network.id, new UptoEvmScheme(signer)).registerExtension(EIP2612_GAS_SPONSORING);
  }
  if (
    options.embeddedChain ||
    (await deployed(options, [BATCH_SETTLEMENT_ADDRESS, ERC3009_DEPOSIT_COLLECTOR_ADDRESS]))
  ) {
    // batch-settlement channels: deposits, claims, settlements and refunds, sent for the seller, who signs its own
    // claims and refunds (no authorizer key here: a facilitator holding one would sign them for any caller).
    facilitator.register(options.network.id, new BatchSettlementEvmScheme(signer));
  }
  return { facilitator, address: account.address };
}

/**
 * Whether the contracts a scheme needs have code on the chain, at their canonical addresses (Permit2 and the x402
 * upto proxy; the batch-settlement channel contract and its ERC-3009 deposit collector): a public network may lack
 * them, and the scheme is then not offered. A chain that cannot be asked quickly counts as lacking them.
 */
async function deployed(options: FacilitatorOptions<EvmNetwork>, addresses: `0x${string}`[]): Promise<boolean> {
  const client = createPublicClient({ transport: http(options.rpcUrl, { retryCount: 0, timeout: 5_000 }) });
  try {
    const codes = await Promise.all(addresses.map((address) => client.getCode({ address })));
    return codes.every((code) => code !== undefined && code !== "0x");
  } catch {
    return false;
  }
}

/**
 * Solana: "exact" only. The official `upto` SVM scheme opens an escrow channel in the x402 payment-channels program
 * (CHNLxYvVA28MJP9PrFuDXccuoGXAx7jBacfLEkahyGsX), whose binary the embedded validator does not have: its verify
 * passes, but every settlement fails on chain.
 */
async function svmFacilitator(options: FacilitatorOptions<SvmNetwork>) {
  const feePayer = await createKeyPairSignerFromBytes(getBase58Encoder().encode(options.privateKey));
  const signer = toFacilitatorSvmSigner(feePayer, { defaultRpcUrl: options.rpcUrl });
  const facilitator = registerExactSvmScheme(new x402Facilitator(), { signer, networks: options.network.id });
  return { facilitator, address: feePayer.address };
}

// The x402 `upto` scheme end to end on the embedded EVM chain, with real pieces only: anvil with our Permit2, upto
// proxy and EIP-2612 USDC; the built-in facilitator over HTTP; the official upto client, resource server and
// facilitator of @x402/evm. Balances are read from the chain.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { x402Client } from "@x402/core/client";
import { type FacilitatorClient, x402ResourceServer } from "@x402/core/server";
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from "@x402/core/types";
import {
  BATCH_SETTLEMENT_ADDRESS,
  ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
  PERMIT2_ADDRESS,
  toClientEvmSigner,
  x402UptoPermit2ProxyABI,
  x402UptoPermit2ProxyAddress,
} from "@x402/evm";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { ExactEvmScheme as ExactEvmServerScheme } from "@x402/evm/exact/server";
import { UptoEvmScheme as UptoEvmClientScheme } from "@x402/evm/upto/client";
import { UptoEvmScheme as UptoEvmServerScheme } from "@x402/evm/upto/server";
import { declareEip2612GasSponsoringExtension } from "@x402/extensions";
import {
  BaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  createWalletClient,
  decodeEventLog,
  getAddress,
  hashDomain,
  http,
  maxUint256,
  parseSignature,
  serializeCompactSignature,
  signatureToCompactSignature,
  type Abi,
  type Hex,
  type PublicClient,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getNetwork, type EvmNetwork } from "../../networks";
import { AuthenticatedFacilitatorClient } from "../../server/payment/facilitator-auth";
import { facilitatorAccess, startFacilitatorServer } from "../lib/facilitator-server";
import permit2Artifact from "./contracts/permit2.artifact.json";
import proxyArtifact from "./contracts/x402-upto-permit2-proxy.artifact.json";
import usdcArtifact from "./contracts/local-usdc.artifact.json";
import { FACILITATOR_ACCOUNT_INDEX, PAY_TO_ACCOUNT_INDEX, PAYER_STARTING_BALANCE, devAccount } from "./dev-accounts";
import { localPermit2Abi, localUsdcAbi, startLocalChain, type LocalChain } from "./local-chain";

// Base: its USDC is in the official client's table of known assets, so the default spend controls accept it.
const network = getNetwork("eip155:8453") as EvmNetwork;
const usdc = network.usdc.address;
const facilitatorAccount = devAccount(FACILITATOR_ACCOUNT_INDEX);
const payTo = devAccount(PAY_TO_ACCOUNT_INDEX).address;
const resource = { url: "http://paysvc.test/v1/chat/completions", description: "chat", mimeType: "application/json" };
/** What the payer signs for at most, and what is then charged: 0.5 USDC and 0.123456 USDC. */
const MAX = 500_000n;
const CHARGED = 123_456n;

let chain: LocalChain;
let facilitator: Awaited<ReturnType<typeof startFacilitatorServer>>;
let facilitatorClient: FacilitatorClient;
let server: x402ResourceServer;
let publicClient: PublicClient;
/** Gas used by the settlement transactions, for the comparison at the end. */
const gas: { uptoWithPermit?: bigint; upto?: bigint; exact?: bigint } = {};

/** Proxy and Permit2 errors in one ABI, so that viem names a revert from either. */
const revertAbi = [...x402UptoPermit2ProxyABI, ...localPermit2Abi.filter((item) => item.type === "error")] as Abi;

beforeAll(async () => {
  chain = await startLocalChain(network, 0);
  const access = facilitatorAccess(payTo);
  facilitator = await startFacilitatorServer({
    network,
    rpcUrl: chain.rpcUrl,
    privateKey: facilitatorAccount.privateKey,
    port: 0,
    embeddedChain: true,
    access,
  });
  facilitatorClient = new AuthenticatedFacilitatorClient({ url: facilitator.url }, access.auth);
  server = new x402ResourceServer(facilitatorClient)
    .register(network.id, new UptoEvmServerScheme())
    .register(network.id, new ExactEvmServerScheme());
  await server.initialize();
  publicClient = createPublicClient({ chain: chain.chain, transport: http(chain.rpcUrl) });
}, 60_000);

afterAll(async () => {
  await facilitator?.stop();
  await chain?.stop();
});

const read = (functionName: string, args: unknown[]) =>
  publicClient.readContract({ address: usdc, abi: localUsdcAbi, functionName, args }) as Promise<bigint>;
const balanceOf = (address: `0x${string}`) => read("balanceOf", [address]);
const permit2Allowance = (owner: `0x${string}`) => read("allowance", [owner, PERMIT2_ADDRESS]);

/** The 402 a server offering `upto` for at most `max` sends, with the EIP-2612 extension when `sponsored`. */
async function uptoPaymentRequired(
  max: bigint,
  sponsored: boolean,
): Promise<{ requirements: PaymentRequirements; paymentRequired: PaymentRequired }> {
  const [requirements] = await server.buildPaymentRequirements({
    scheme: "upto",
    network: network.id,
    payTo,
    maxTimeoutSeconds: 300,
    price: { amount: max.toString(), asset: usdc, extra: { ...network.usdc.eip712 } },
  });
  const paymentRequired = await server.createPaymentRequiredResponse(
    [requirements!],
    resource,
    "payment required",
    sponsored ? declareEip2612GasSponsoringExtension() : undefined,
  );
  return { requirements: requirements!, paymentRequired };
}

/** The official upto client of a payer, reading the chain through a public client (for the EIP-2612 nonce). */
function uptoClient(payerIndex: number): x402Client {
  const client = new x402Client();
  const signer = toClientEvmSigner(privateKeyToAccount(devAccount(payerIndex).privateKey), publicClient);
  return client.register(network.id, new UptoEvmClientScheme(signer));
}

interface UptoAuthorization {
  signature: Hex;
  permit2Authorization: {
    from: `0x${string}`;
    permitted: { token: `0x${string}`; amount: string };
    spender: `0x${string}`;
    nonce: string;
    deadline: string;
    witness: { to: `0x${string}`; facilitator: `0x${string}`; validAfter: string };
  };
}

/** The arguments of the proxy's `settle` for a signed payload, as the facilitator builds them. */
function settleArgs(payload: PaymentPayload, amount: bigint) {
  const { signature, permit2Authorization: auth } = payload.payload as unknown as UptoAuthorization;
  return [
    {
      permitted: { token: auth.permitted.token, amount: BigInt(auth.permitted.amount) },
      nonce: BigInt(auth.nonce),
      deadline: BigInt(auth.deadline),
    },
    amount,
    auth.from,
    { to: auth.witness.to, facilitator: auth.witness.facilitator, validAfter: BigInt(auth.witness.validAfter) },
    signature,
  ] as const;
}

/** The name of the custom error a simulated proxy call reverts with (from the proxy or from Permit2). */
async function revertOf(payload: PaymentPayload, amount: bigint, from = facilitatorAccount.address): Promise<string> {
  return simulatedSettle(settleArgs(payload, amount), from);
}

async function simulatedSettle(
  args: ReturnType<typeof settleArgs>,
  from: `0x${string}` = facilitatorAccount.address,
): Promise<string> {
  try {
    await publicClient.simulateContract({
      account: from,
      address: x402UptoPermit2ProxyAddress,
      abi: revertAbi,
      functionName: "settle",
      args,
    });
  } catch (error) {
    const reverted = error instanceof BaseError ? error.walk((e) => e instanceof ContractFunctionRevertedError) : null;
    return (reverted as ContractFunctionRevertedError | null)?.data?.errorName ?? String(error);
  }
  return "no revert";
}

/** The proxy's events in a settlement's receipt. */
async function proxyEvents(transaction: string): Promise<{ names: string[]; gasUsed: bigint }> {
  const receipt = await publicClient.getTransactionReceipt({ hash: transaction as Hex });
  expect(receipt.status).toBe("success");
  const names = receipt.logs
    .filter((log) => getAddress(log.address) === getAddress(x402UptoPermit2ProxyAddress))
    .map((log) => decodeEventLog({ abi: x402UptoPermit2ProxyABI, data: log.data, topics: log.topics }).eventName);
  return { names, gasUsed: receipt.gasUsed };
}

describe("the embedded chain's Permit2 and x402 upto proxy", () => {
  it("are our compiled contracts at the canonical addresses, the proxy with exactly the package's ABI", async () => {
    expect(await publicClient.getCode({ address: PERMIT2_ADDRESS })).toBe(permit2Artifact.runtimeBytecode);
    expect(await publicClient.getCode({ address: x402UptoPermit2ProxyAddress })).toBe(proxyArtifact.runtimeBytecode);
    const canonical = (abi: readonly unknown[]) => abi.map((item) => JSON.stringify(item, sortedKeys)).sort();
    expect(canonical(proxyArtifact.abi)).toEqual(canonical(x402UptoPermit2ProxyABI));
    // The EIP-712 domain of the canonical Permit2: name "Permit2", the chain id, the contract; no version.
    const domainSeparator = await publicClient.readContract({
      address: PERMIT2_ADDRESS,
      abi: localPermit2Abi,
      functionName: "DOMAIN_SEPARATOR",
    });
    expect(domainSeparator).toBe(
      hashDomain({
        domain: { name: "Permit2", chainId: BigInt(network.chainId), verifyingContract: PERMIT2_ADDRESS },
        types: {
          EIP712Domain: [
            { name: "name", type: "string" },
            { name: "chainId", type: "uint256" },
            { name: "verifyingContract", type: "address" },
          ],
        },
      }),
    );
  });
});

describe("x402 upto on the embedded chain", () => {
  const payer = devAccount(2).address;
  let signed: { requirements: PaymentRequirements; paymentRequired: PaymentRequired; payload: PaymentPayload };

  it("(e) the facilitator's /supported lists upto with the address that settles, and the EIP-2612 extension", async () => {
    // With the credentials the built-in facilitator serves its app with (it answers 401 without).
    const supported = (await facilitatorClient.getSupported()) as unknown as {
      kinds: { x402Version: number; scheme: string; network: string; extra?: Record<string, unknown> }[];
      extensions: string[];
      signers: Record<string, string[]>;
    };
    expect(supported.kinds).toContainEqual({
      x402Version: 2,
      scheme: "upto",
      network: network.id,
      extra: { facilitatorAddress: facilitatorAccount.address },
    });
    expect(supported.kinds).toContainEqual(expect.objectContaining({ x402Version: 2, scheme: "exact" }));
    expect(supported.extensions).toContain("eip2612GasSponsoring");
    expect(supported.signers["eip155:*"]).toContain(facilitatorAccount.address);
  });

  it("(a) a payer without a Permit2 allowance signs a maximum and an EIP-2612 permit; a smaller amount is settled", async () => {
    expect(await permit2Allowance(payer)).toBe(0n);
    const { requirements, paymentRequired } = await uptoPaymentRequired(MAX, true);
    expect(requirements).toEqual({
      scheme: "upto",
      network: network.id,
      amount: MAX.toString(),
      asset: usdc,
      payTo,
      maxTimeoutSeconds: 300,
      extra: {
        name: "USD Coin",
        version: "2",
        assetTransferMethod: "permit2",
        facilitatorAddress: facilitatorAccount.address,
      },
    });
    const payload = await uptoClient(2).createPaymentPayload(paymentRequired);
    signed = { requirements, paymentRequired, payload };

    const { permit2Authorization } = payload.payload as unknown as UptoAuthorization;
    expect(permit2Authorization).toMatchObject({
      from: payer,
      permitted: { token: usdc, amount: MAX.toString() },
      spender: x402UptoPermit2ProxyAddress,
      witness: { to: payTo, facilitator: facilitatorAccount.address, validAfter: "0" },
    });
    const permit = (payload.extensions?.eip2612GasSponsoring as { info: Record<string, string> }).info;
    expect(permit).toMatchObject({
      from: payer,
      asset: usdc,
      spender: PERMIT2_ADDRESS,
      amount: MAX.toString(),
      nonce: "0",
      deadline: permit2Authorization.deadline,
    });
    expect(server.validateExtensions(paymentRequired, payload)).toEqual({ valid: true });

    const verified = await server.verifyPayment(payload, requirements);
    expect(verified).toMatchObject({ isValid: true, payer });

    const [payerBefore, payToBefore] = await Promise.all([balanceOf(payer), balanceOf(payTo)]);
    const settled = await server.settlePayment(payload, requirements, paymentRequired.extensions, undefined, {
      amount: CHARGED.toString(),
    });
    expect(settled).toMatchObject({ success: true, payer, network: network.id, amount: CHARGED.toString() });
    expect(await balanceOf(payer)).toBe(payerBefore - CHARGED);
    expect(await balanceOf(payTo)).toBe(payToBefore + CHARGED);

    const { names, gasUsed } = await proxyEvents(settled.transaction);
    expect(names).toEqual(["SettledWithPermit"]);
    gas.uptoWithPermit = gasUsed;
    // The permit allowed Permit2 the maximum; the settlement used what was charged of it.
    expect(await permit2Allowance(payer)).toBe(MAX - CHARGED);
    expect(await read("nonces", [payer])).toBe(1n);
  });

  it("(b) the same signature settled a second time is refused, and nothing moves", async () => {
    const { requirements, payload } = signed;
    const [payerBefore, payToBefore] = await Promise.all([balanceOf(payer), balanceOf(payTo)]);
    const again = await facilitatorClient.settle(payload, { ...requirements, amount: "1000" });
    // The package explains the failed simulation by what it can read: the permit was used, and what is left of
    // the allowance it gave (the maximum less the charge) is below the maximum. On chain it is the nonce (below).
    expect(again).toMatchObject({ success: false, errorReason: "permit2_allowance_required" });
    expect(again.transaction).toBe("");
    const verified = await facilitatorClient.verify(payload, requirements);
    expect(verified).toMatchObject({ isValid: false, invalidReason: "permit2_allowance_required" });
    expect(await balanceOf(payer)).toBe(payerBefore);
    expect(await balanceOf(payTo)).toBe(payToBefore);
    // On chain, Permit2 refuses the used nonce.
    expect(await revertOf(payload, 1000n)).toBe("InvalidNonce");
  });

  it("(c) settling more than the signed maximum is refused by the facilitator and by the proxy", async () => {
    const { requirements, paymentRequired } = await uptoPaymentRequired(MAX, true);
    const payload = await uptoClient(2).createPaymentPayload(paymentRequired);
    const [payerBefore, payToBefore] = await Promise.all([balanceOf(payer), balanceOf(payTo)]);

    const over = await facilitatorClient.settle(payload, { ...requirements, amount: (MAX + 1n).toString() });
    expect(over).toMatchObject({ success: false, errorReason: "invalid_upto_evm_payload_settlement_exceeds_amount" });
    // Through the resource server's settlement override, as a gateway would ask for it: the same answer.
    const overridden = await server.settlePayment(payload, requirements, paymentRequired.extensions, undefined, {
      amount: (MAX + 1n).toString(),
    });
    expect(overridden).toMatchObject({ success: false, errorReason: over.errorReason });
    expect(await balanceOf(payer)).toBe(payerBefore);
    expect(await balanceOf(payTo)).toBe(payToBefore);

    // The proxy itself: more than the maximum, or a caller other than the facilitator the payer named.
    expect(await revertOf(payload, MAX + 1n)).toBe("AmountExceedsPermitted");
    expect(await revertOf(payload, 1n, devAccount(9).address)).toBe("UnauthorizedFacilitator");
  });

  it("(d) a payer who approved Permit2 pays without a permit, through the proxy's settle", async () => {
    const approver = devAccount(3);
    const wallet = createWalletClient({
      account: privateKeyToAccount(approver.privateKey),
      chain: chain.chain,
      transport: http(chain.rpcUrl),
    });
    const approval = await wallet.writeContract({
      address: usdc,
      abi: localUsdcAbi,
      functionName: "approve",
      args: [PERMIT2_ADDRESS, maxUint256],
    });
    expect((await publicClient.waitForTransactionReceipt({ hash: approval })).status).toBe("success");

    // The 402 declares the extension, but with an allowance in place the client signs no permit.
    const { requirements, paymentRequired } = await uptoPaymentRequired(MAX, true);
    const payload = await uptoClient(3).createPaymentPayload(paymentRequired);
    const sponsoring = payload.extensions?.eip2612GasSponsoring as { info: Record<string, unknown> } | undefined;
    expect(sponsoring?.info.signature).toBeUndefined();

    expect(await server.verifyPayment(payload, requirements)).toMatchObject({ isValid: true });
    const [payerBefore, payToBefore] = await Promise.all([balanceOf(approver.address), balanceOf(payTo)]);
    const settled = await server.settlePayment(payload, requirements, paymentRequired.extensions, undefined, {
      amount: CHARGED.toString(),
    });
    expect(settled).toMatchObject({ success: true, amount: CHARGED.toString() });
    expect(await balanceOf(approver.address)).toBe(payerBefore - CHARGED);
    expect(await balanceOf(payTo)).toBe(payToBefore + CHARGED);
    const { names, gasUsed } = await proxyEvents(settled.transaction);
    expect(names).toEqual(["Settled"]);
    gas.upto = gasUsed;
    expect(await read("nonces", [approver.address])).toBe(0n);
  });

  it("Permit2 checks signatures as the canonical one: 65 or 64 bytes (EIP-2098), by the owner", async () => {
    // Payer 3 approved Permit2 in (d).
    const { paymentRequired } = await uptoPaymentRequired(MAX, false);
    const payload = await uptoClient(3).createPaymentPayload(paymentRequired);
    const [permit, amount, owner, witness, signature] = settleArgs(payload, 1n);
    const compact = serializeCompactSignature(signatureToCompactSignature(parseSignature(signature)));
    expect(await simulatedSettle([permit, amount, owner, witness, signature])).toBe("no revert");
    expect(await simulatedSettle([permit, amount, owner, witness, compact])).toBe("no revert");
    expect(await simulatedSettle([permit, amount, owner, witness, `${signature}00`])).toBe("InvalidSignatureLength");
    expect(await simulatedSettle([permit, amount, devAccount(4).address, witness, signature])).toBe("InvalidSigner");
    // The witness is signed: another recipient breaks the signature.
    expect(await simulatedSettle([permit, amount, owner, { ...witness, to: devAccount(9).address }, signature])).toBe(
      "InvalidSigner",
    );
    expect(await simulatedSettle([{ ...permit, deadline: 1n }, amount, owner, witness, signature])).toBe(
      "SignatureExpired",
    );
  });

  it("without an allowance and without the extension, verify asks for the Permit2 approval", async () => {
    const { requirements, paymentRequired } = await uptoPaymentRequired(MAX, false);
    const payload = await uptoClient(5).createPaymentPayload(paymentRequired);
    expect(payload.extensions).toBeUndefined();
    expect(await facilitatorClient.verify(payload, requirements)).toMatchObject({
      isValid: false,
      invalidReason: "permit2_allowance_required",
    });
  });

  it("an exact (EIP-3009) settle through the same facilitator, for the gas comparison", async () => {
    const [requirements] = await server.buildPaymentRequirements({
      scheme: "exact",
      network: network.id,
      payTo,
      maxTimeoutSeconds: 300,
      price: { amount: CHARGED.toString(), asset: usdc, extra: { ...network.usdc.eip712 } },
    });
    const paymentRequired = await server.createPaymentRequiredResponse([requirements!], resource);
    const client = new x402Client();
    registerExactEvmScheme(client, {
      signer: toClientEvmSigner(privateKeyToAccount(devAccount(4).privateKey), publicClient),
    });
    const payload = await client.createPaymentPayload(paymentRequired);
    const settled = await server.settlePayment(payload, requirements!);
    expect(settled.success).toBe(true);
    gas.exact = (await publicClient.getTransactionReceipt({ hash: settled.transaction as Hex })).gasUsed;

    console.info(
      `gas used on the local chain: upto settleWithPermit ${gas.uptoWithPermit}, upto settle ${gas.upto}, ` +
        `exact transferWithAuthorization ${gas.exact}`,
    );
    expect(gas.upto).toBeGreaterThan(gas.exact!);
    expect(gas.uptoWithPermit).toBeGreaterThan(gas.upto!);
  });
});

describe("a chain loaded from a state saved before Permit2 existed", () => {
  let directory: string;
  beforeAll(() => {
    directory = mkdtempSync(join(tmpdir(), "paysvc-upto-chain-"));
  });
  afterAll(() => rmSync(directory, { recursive: true, force: true }));

  it("gets Permit2, the proxy and the current USDC code, and keeps its balances", async () => {
    const stateFile = join(directory, "chain.json");
    const payer = devAccount(6);
    const older = await startLocalChain(network, 0, { stateFile });
    const olderClient = createPublicClient({ chain: older.chain, transport: http(older.rpcUrl) });
    const wallet = createWalletClient({
      account: privateKeyToAccount(payer.privateKey),
      chain: older.chain,
      transport: http(older.rpcUrl),
    });
    const hash = await wallet.writeContract({
      address: usdc,
      abi: localUsdcAbi,
      functionName: "transfer",
      args: [payTo, 1_000n],
    });
    expect((await olderClient.waitForTransactionReceipt({ hash })).status).toBe("success");
    // What an older version left: no Permit2, no proxy, no channel contracts, and a USDC of other code (the same
    // storage layout).
    for (const address of [
      PERMIT2_ADDRESS,
      x402UptoPermit2ProxyAddress,
      BATCH_SETTLEMENT_ADDRESS,
      ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
    ]) {
      await olderClient.request({ method: "anvil_setCode" as never, params: [address, "0x"] as never });
    }
    const otherUsdcCode = usdcArtifact.runtimeBytecode.replace(/a2646970667358.*$/, "00");
    await olderClient.request({ method: "anvil_setCode" as never, params: [usdc, otherUsdcCode] as never });
    expect(await olderClient.getCode({ address: PERMIT2_ADDRESS })).toBeUndefined();
    // The built-in facilitator on a chain that is not the embedded one offers `upto` and channels only where their
    // contracts are.
    expect(await supportedSchemes(older.rpcUrl)).toEqual(["exact"]);
    await older.stop();

    const loaded = await startLocalChain(network, 0, { stateFile });
    try {
      const client = createPublicClient({ chain: loaded.chain, transport: http(loaded.rpcUrl) });
      expect(await client.getCode({ address: PERMIT2_ADDRESS })).toBe(permit2Artifact.runtimeBytecode);
      expect(await client.getCode({ address: x402UptoPermit2ProxyAddress })).toBe(proxyArtifact.runtimeBytecode);
      expect(await client.getCode({ address: usdc })).toBe(usdcArtifact.runtimeBytecode);
      const balance = (address: `0x${string}`) =>
        client.readContract({ address: usdc, abi: localUsdcAbi, functionName: "balanceOf", args: [address] });
      // Neither minted again nor lost.
      expect(await balance(payer.address)).toBe(PAYER_STARTING_BALANCE - 1_000n);
      expect(await balance(payTo)).toBe(1_000n);
      expect(await supportedSchemes(loaded.rpcUrl)).toEqual(["exact", "upto", "batch-settlement"]);
    } finally {
      await loaded.stop();
    }
  }, 60_000);
});

/** The v2 schemes a built-in facilitator running on the chain at `rpcUrl` as on a real one lists in /supported. */
async function supportedSchemes(rpcUrl: string): Promise<string[]> {
  const access = facilitatorAccess(payTo);
  const started = await startFacilitatorServer({
    network,
    rpcUrl,
    privateKey: facilitatorAccount.privateKey,
    port: 0,
    embeddedChain: false,
    access,
  });
  try {
    const asked = await fetch(`${started.url}/supported`, { headers: { authorization: access.auth.value } });
    const supported = (await asked.json()) as {
      kinds: { x402Version: number; scheme: string }[];
    };
    return supported.kinds.filter((kind) => kind.x402Version === 2).map((kind) => kind.scheme);
  } finally {
    await started.stop();
  }
}

/** JSON.stringify replacer writing object keys in sorted order, for comparing ABIs whatever their key order. */
function sortedKeys(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).sort(([a], [b]) => a.localeCompare(b)));
}

import { x402Client } from "@x402/core/client";
import { encodePaymentSignatureHeader } from "@x402/core/http";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { createSIWxClientExtension } from "@x402/extensions/sign-in-with-x";
import { createPublicClient, encodeFunctionData, http, keccak256, serializeErc6492Signature, toHex } from "viem";
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { OWNED_WALLET_FACTORY_ADDRESS, ownedWalletFactoryAbi } from "../cli/dev-stack/local-chain";
import { waitFor } from "../cli/dev-stack/wait-for";
import { fundedPayer } from "./support/funded-payer";
import { chatBody, officialPayment, paymentRowsOf, postJson, quote, stack, usdcBalance } from "./support/payments";

/**
 * Payers that are contracts, on the embedded chain: a wallet of our factory (OwnedWallets.sol) deployed already
 * (ERC-1271) or not yet (ERC-6492, its signature carrying the factory call), each paying with the official client
 * and served; and junk in their clothes, refused before any ledger row, hold or facilitator call.
 */
const chain = () => createPublicClient({ transport: http(stack().chainRpcUrl) });

/** A wallet of the factory for a new owner key: its address, known before it exists, funded with `amount`. */
async function ownedWallet(amount: bigint) {
  const owner = privateKeyToAccount(generatePrivateKey());
  const salt = keccak256(toHex(`wallet of ${owner.address}`));
  const address = (await chain().readContract({
    address: OWNED_WALLET_FACTORY_ADDRESS,
    abi: ownedWalletFactoryAbi,
    functionName: "walletOf",
    args: [owner.address, salt],
  })) as `0x${string}`;
  // Funded at its address before it has code, as a counterfactual wallet is.
  const funder = await fundedPayer(amount);
  await funder.drain(address);
  const deployCall = encodeFunctionData({
    abi: ownedWalletFactoryAbi,
    functionName: "deploy",
    args: [owner.address, salt],
  });
  return { owner, address, deployCall };
}

/**
 * The official client paying as the wallet: its owner signs the EIP-712 message; undeployed, the signature is wrapped
 * in ERC-6492 with the factory call.
 */
function walletClient(wallet: { owner: PrivateKeyAccount; address: `0x${string}`; deployCall: `0x${string}` }) {
  const client = new x402Client();
  registerExactEvmScheme(client, {
    signer: {
      address: wallet.address,
      async signTypedData(typedData) {
        const signature = await wallet.owner.signTypedData(
          typedData as Parameters<PrivateKeyAccount["signTypedData"]>[0],
        );
        const deployed = ((await chain().getCode({ address: wallet.address })) ?? "0x") !== "0x";
        if (deployed) return signature;
        return serializeErc6492Signature({ address: OWNED_WALLET_FACTORY_ADDRESS, data: wallet.deployCall, signature });
      },
    },
  });
  return client;
}

const facilitatorBreakers = async () => {
  const health = (await (await fetch(`${stack().appUrl}/health`)).json()) as {
    checks: { facilitators: Record<string, { breaker: string; consecutive_failures: number }> };
  };
  return Object.values(health.checks.facilitators).map(({ breaker, consecutive_failures }) => ({
    breaker,
    consecutive_failures,
  }));
};

describe("payers that are contract wallets", () => {
  it("serves and settles a wallet not deployed yet (ERC-6492), then the same wallet deployed (ERC-1271)", async () => {
    const body = chatBody("a contract wallet pays");
    const price = BigInt((await quote("/v1/chat/completions", body)).accepts[0]!.amount);
    const wallet = await ownedWallet(10n * price);
    expect(await chain().getCode({ address: wallet.address })).toBeUndefined();
    const pay = wrapFetchWithPayment(fetch, walletClient(wallet));
    const call = () =>
      pay(`${stack().appUrl}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const first = await call();
    expect(first.status, await first.clone().text()).toBe(200);
    // The facilitator deployed it through the factory as it settled.
    expect(((await chain().getCode({ address: wallet.address })) ?? "0x").length).toBeGreaterThan(2);
    const second = await call();
    expect(second.status, await second.clone().text()).toBe(200);
    expect(await usdcBalance(wallet.address)).toBe(8n * price);
    await waitFor(async () => paymentRowsOf(wallet.address).every((row) => row.status === "settled"), {
      timeoutMs: 10_000,
      what: "both payments settled in the ledger",
    });
    expect(paymentRowsOf(wallet.address)).toHaveLength(2);
  });

  it("refuses a signature its wallet does not vouch for, before any ledger row", async () => {
    const body = chatBody("not the owner");
    const required = await quote("/v1/chat/completions", body);
    const wallet = await ownedWallet(10n * BigInt(required.accepts[0]!.amount));
    // Signed by a key that is not the owner's: deployed or not, the wallet says no.
    const stranger = { ...wallet, owner: privateKeyToAccount(generatePrivateKey()) };
    const payload = await walletClient(stranger).createPaymentPayload(required);
    const answer = await postJson("/v1/chat/completions", body, {
      "payment-signature": encodePaymentSignatureHeader(payload),
    });
    expect(answer.status).toBe(402);
    expect(((await answer.json()) as { error: { code: string } }).error.code).toBe("payment_rejected");
    expect(paymentRowsOf(wallet.address)).toEqual([]);
  });
});

describe("a contract wallet owning keys", () => {
  it("buys a key, then signs in (ERC-1271: its owner key signs, the wallet vouches) and lists it", async () => {
    const purchase = { model: "vendor-a/gpt-6-luna", tokens: 100_000 };
    const price = BigInt((await quote("/prepaid/codes", purchase)).accepts[0]!.amount);
    const wallet = await ownedWallet(2n * price);
    const bought = await wrapFetchWithPayment(fetch, walletClient(wallet))(`${stack().appUrl}/prepaid/codes`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(purchase),
    });
    expect(bought.status, await bought.clone().text()).toBe(201);
    const { id } = (await bought.json()) as { id: number };
    // Deployed by the facilitator as the purchase settled: from now on the wallet's code answers for it.
    expect(((await chain().getCode({ address: wallet.address })) ?? "0x").length).toBeGreaterThan(2);
    const signer = {
      address: wallet.address,
      signMessage: ({ message }: { message: string }) => wallet.owner.signMessage({ message }),
    };
    const signedIn = wrapFetchWithPayment(
      fetch,
      new x402Client().registerExtension(createSIWxClientExtension({ signers: [signer] })),
    );
    const listed = await signedIn(`${stack().appUrl}/v1/prepaid/keys`);
    expect(listed.status, await listed.clone().text()).toBe(200);
    const body = (await listed.json()) as { owner: string; data: { id: number }[] };
    expect(body.owner).toBe(wallet.address.toLowerCase());
    expect(body.data.map((key) => key.id)).toEqual([id]);

    // Its owner key alone is no one's wallet: it signs in as itself, and owns nothing.
    const ownerKey = wrapFetchWithPayment(
      fetch,
      new x402Client().registerExtension(createSIWxClientExtension({ signers: [wallet.owner] })),
    );
    const own = (await (await ownerKey(`${stack().appUrl}/v1/prepaid/keys`)).json()) as { data: unknown[] };
    expect(own.data).toEqual([]);
  });
});

describe("junk in a funded payer's name", () => {
  it("never reaches the facilitator, its breaker or the ledger: the payer is served right after", async () => {
    const body = chatBody("junk first");
    const required = await quote("/v1/chat/completions", body);
    const payer = await fundedPayer(10n * BigInt(required.accepts[0]!.amount));
    const honest = await officialPayment(payer.key, required);
    const decoded = JSON.parse(Buffer.from(honest, "base64").toString("utf8")) as { payload: { signature: string } };
    const before = await facilitatorBreakers();
    for (let index = 0; index < 20; index++) {
      // Random bytes ending in ERC-6492's magic suffix, as if the payer were a wallet not deployed yet.
      const junk = `0x${Buffer.from(generatePrivateKey().slice(2).repeat(3), "hex").toString("hex")}${"6492".repeat(16)}`;
      const forged = { ...decoded, payload: { ...decoded.payload, signature: junk } };
      const answer = await postJson("/v1/chat/completions", body, {
        "payment-signature": Buffer.from(JSON.stringify(forged)).toString("base64"),
      });
      expect(answer.status).toBe(402);
      expect(((await answer.json()) as { error: { code: string } }).error.code).toBe("payment_rejected");
    }
    expect(await facilitatorBreakers()).toEqual(before);
    expect(paymentRowsOf(payer.address)).toEqual([]);
    const served = await postJson("/v1/chat/completions", body, { "payment-signature": honest });
    expect(served.status).toBe(200);
    // Its ledger row follows the answer.
    await waitFor(async () => paymentRowsOf(payer.address)[0]?.status === "settled", {
      timeoutMs: 10_000,
      what: "the honest payment settled",
    });
    expect(paymentRowsOf(payer.address)).toHaveLength(1);
  });
});

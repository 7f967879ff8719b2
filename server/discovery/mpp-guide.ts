import type { DeploymentFacts } from "./deployment-facts";

/** Why a deployment offers no MPP, where it does not: on Solana. */
export const MPP_ABSENT_ON_SOLANA =
  "MPP is not offered on Solana: its charge methods there are not an x402 exact payment that this deployment's facilitators settle; pay with x402";

/** One sentence on MPP for a document's summary or instructions. */
export function mppSentence(facts: DeploymentFacts): string {
  if (!facts.mpp) return ` ${MPP_ABSENT_ON_SOLANA}.`;
  return " The same 402 carries an MPP challenge (WWW-Authenticate: Payment, method evm, intent charge) for the same amount: an MPP client (mppx) pays it with Authorization: Payment instead, and gets a Payment-Receipt.";
}

/** What /.well-known/x402 says of MPP. */
export function mppManifest(facts: DeploymentFacts): Record<string, unknown> {
  if (!facts.mpp) return { offered: false, reason: MPP_ABSENT_ON_SOLANA };
  return {
    offered: true,
    challenge: "WWW-Authenticate: Payment, method evm, intent charge, on every 402 beside PAYMENT-REQUIRED",
    credential:
      "Authorization: Payment (an EIP-3009 authorization of the amount to payTo, nonce = the challenge's hash)",
    receipt: "Payment-Receipt",
    chainId: facts.network.kind === "evm" ? facts.network.chainId : undefined,
    currency: facts.network.usdc.address,
    authorization: facts.network.kind === "evm" ? facts.network.usdc.eip712 : undefined,
  };
}

/** The MPP section of AI-AGENTS.md: how an MPP client pays, or why this network has none. */
export function mppLines(facts: DeploymentFacts): string[] {
  if (facts.network.kind !== "evm" || !facts.mpp) return ["## MPP", "", `${MPP_ABSENT_ON_SOLANA}.`, ""];
  const { name, version } = facts.network.usdc.eip712;
  return [
    "## MPP (the Machine Payments Protocol)",
    "",
    `Every 402 also carries WWW-Authenticate: Payment with MPP's evm charge method (chain ${facts.network.chainId}, USDC ${facts.network.usdc.address}, recipient ${facts.payTo}) for exactly the amount of PAYMENT-REQUIRED's exact entry. Sign the EIP-3009 authorization it asks for (its nonce is the challenge's hash) and repeat the identical request with Authorization: Payment <credential>; the challenge expires after ${facts.paymentTimeoutSeconds} s and pays only the request it was issued for. A whole answer carries Payment-Receipt (the transaction in its reference); a stream passed on while it settles states the transaction in its final usage event instead, as an x402 stream does. An authorization is spent once, whether it comes by MPP or wrapped as x402. Prepaid keys can be bought with MPP too.`,
    "",
    "```ts",
    'import { Mppx, evm } from "mppx/client";',
    `const mppx = Mppx.create({ methods: [evm({ account, maxAmount: "1", authorization: { name: "${name}", version: "${version}" } })], polyfill: false });`,
    `const openai = new OpenAI({ apiKey: "mpp", baseURL: "${facts.origin}/v1", fetch: mppx.fetch });`,
    "```",
    "",
  ];
}

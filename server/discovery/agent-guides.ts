import { embeddings, freeChat } from "../../config/free-tier";
import { BATCH_SETTLEMENT_ADDRESS } from "@x402/evm";
import { chatLimits, pricingRules } from "../../config/limits";
import { prepaidPacks } from "../../config/prepaid-packs";
import { atomicToDecimal } from "../core/money";
import { highestChatQuote } from "../pricing/quote-completion";
import { schemesOf, type DeploymentFacts } from "./deployment-facts";
import { mppLines, mppSentence } from "./mpp-guide";

/** The catalog's highest chat quote in USD, and the whole dollars at or above it a spend control should allow. */
function spendCeiling(facts: DeploymentFacts): { highest: string; dollars: number } {
  const { decimals } = facts.network.usdc;
  const highest = highestChatQuote(facts.models.chat, facts.network);
  const unit = 10n ** BigInt(decimals);
  return { highest: atomicToDecimal(highest, decimals), dollars: Number((highest + unit - 1n) / unit) };
}

/** A working TypeScript client: the official openai SDK paying through the official x402 fetch wrapper. */
export function clientExampleCode(facts: DeploymentFacts): string {
  const { network } = facts;
  const signerLines =
    network.kind === "evm"
      ? [
          'import { toClientEvmSigner } from "@x402/evm";',
          'import { registerExactEvmScheme } from "@x402/evm/exact/client";',
          'import { createPublicClient, http } from "viem";',
          'import { privateKeyToAccount } from "viem/accounts";',
          "",
          "const account = privateKeyToAccount(process.env.WALLET_PRIVATE_KEY as `0x${string}`);",
          "const client = new x402Client();",
          "registerExactEvmScheme(client, { signer: toClientEvmSigner(account, createPublicClient({ transport: http(process.env.RPC_URL) })) });",
        ]
      : [
          'import { ExactSvmScheme } from "@x402/svm/exact/client";',
          'import { createKeyPairSignerFromBytes, getBase58Encoder } from "@solana/kit";',
          "",
          "// WALLET_PRIVATE_KEY: the 64-byte keypair in base58, as wallets export it.",
          "const signer = await createKeyPairSignerFromBytes(getBase58Encoder().encode(process.env.WALLET_PRIVATE_KEY!));",
          "const client = new x402Client();",
          `client.register("${network.id}", new ExactSvmScheme(signer, { rpcUrl: process.env.RPC_URL }));`,
        ];
  // The official client knows USDC on Polygon, Base and Solana; another network's USDC must be allowed by name.
  const knownAsset = !network.usdc.addressFromConfiguration;
  const { highest, dollars } = spendCeiling(facts);
  const atomicCeiling = (10n ** BigInt(network.usdc.decimals) * BigInt(dollars)).toString();
  return [
    'import OpenAI from "openai";',
    'import { x402Client } from "@x402/core/client";',
    'import { wrapFetchWithPayment } from "@x402/fetch";',
    ...signerLines,
    `// The client pays at most $1 per payment unless told otherwise; the largest chat quote here is ${highest} USD.`,
    knownAsset
      ? `client.setSpendControls({ maxAmountPerPayment: "$${dollars}" });`
      : `client.setSpendControls({ allowedAssets: [{ network: "${network.id}", asset: "${network.usdc.address}", maxAmountPerPayment: "${atomicCeiling}" }] });`,
    "",
    `const openai = new OpenAI({ apiKey: "x402", baseURL: "${facts.origin}/v1", fetch: wrapFetchWithPayment(fetch, client) });`,
    "const completion = await openai.chat.completions.create({",
    `  model: "${facts.models.chat[0]!.id}",`,
    '  messages: [{ role: "user", content: "Hello" }],',
    "  max_tokens: 256,",
    "});",
    "console.log(completion.choices[0].message.content);",
  ].join("\n");
}

/** The first step by hand: the 402 and its price, with curl. */
export function curlExampleCode(facts: DeploymentFacts): string {
  return [
    `curl -i ${facts.origin}/v1/chat/completions \\`,
    "  -H 'content-type: application/json' \\",
    `  -d '{"model":"${facts.models.chat[0]!.id}","messages":[{"role":"user","content":"Hello"}],"max_tokens":256}'`,
    "# HTTP/1.1 402 Payment Required; the PAYMENT-REQUIRED header is base64 JSON with the exact price.",
    "# Sign it (the official x402 client does) and repeat the request with -H 'PAYMENT-SIGNATURE: <base64 payload>'.",
  ].join("\n");
}

function priceLines({ models }: DeploymentFacts): string[] {
  const { chat, images, decision } = models;
  return [
    ...chat.map(
      (model) =>
        `- ${model.id}: ${model.inputUsdPerMillion} USD per 1M input tokens, ${model.outputUsdPerMillion} per 1M output tokens, context ${model.contextTokens}, max output ${model.maxOutputTokens}`,
    ),
    ...images.map((model) => `- ${model.id}: ${model.sizes.join(", ")}, ${model.usdPerImage} USD per image`),
    `- ${decision.id}: ${decision.inputUsdPerMillion} USD per 1M input tokens, output free`,
    ...chat.map(
      (model) =>
        `- prepaid pack for ${model.id}: tokens x ${model.inputUsdPerMillion} USD per 1M (${prepaidPacks.minTokens} to ${prepaidPacks.maxTokens} tokens, steps of ${prepaidPacks.stepTokens}) + settlement fee`,
    ),
  ];
}

function flowSteps(facts: DeploymentFacts): string[] {
  const { network } = facts;
  const signing =
    network.kind === "evm"
      ? `2. Sign an EIP-3009 transferWithAuthorization of exactly accepts[0].amount of USDC (${network.usdc.address} on ${network.id}) to ${facts.payTo}; the official x402 client does this.`
      : `2. Build a transaction with a TransferChecked of exactly accepts[0].amount of USDC (mint ${network.usdc.address} on ${network.id}) from your token account to the associated token account of ${facts.payTo}, with accepts[0].extra.feePayer as fee payer; sign it as the owner and leave the fee payer's signature empty (the facilitator pays the fee). The official x402 client (@x402/svm) does this.`;
  return [
    `1. Send the request without payment. The answer is HTTP 402 with the header PAYMENT-REQUIRED: base64 of JSON with x402Version 2, resource.url, accepts[0] (scheme exact, network, amount in atomic units, asset, payTo, maxTimeoutSeconds, extra ${network.kind === "evm" ? "{name, version}" : "{feePayer}"}) and extensions.quote (the price breakdown).`,
    signing,
    "3. Repeat the identical request (same body, same URL) with the header PAYMENT-SIGNATURE: base64 of the JSON payment payload.",
    "4. The service verifies the payment, does the work, and settles only if the work succeeded; a whole answer carries PAYMENT-RESPONSE (base64 settlement with the transaction hash). A stream may start while its payment settles: its final usage event (stream_options.include_usage) then states the transaction, and a settlement refused mid-stream ends it with an error event whose code is settlement_failed. A signature is accepted once.",
  ];
}

const errorLines = [
  "- 400: invalid request; error.param names the field. No 402 is sent for an invalid request.",
  "- 402: payment required, or the payment was refused (error.code: payment_invalid, payment_mismatch, payment_rejected, payment_already_used, settlement_failed); nothing was charged.",
  "- 401 / 429 with a prepaid key: unknown key / budget used up (insufficient_quota).",
  "- 429 on the free chat: free_tier_exhausted, with Retry-After.",
  "- 502: the model provider failed; the payment was not settled. 503: the facilitator is unavailable; nothing was charged.",
];

/** GET /llms.txt, in the llmstxt.org format: a title, a summary, then sections of links and notes. */
export function llmsTxt(facts: DeploymentFacts): string {
  const endpoints = facts.catalog.map(
    (endpoint) =>
      `- [${endpoint.method} ${endpoint.path}](${facts.origin}${endpoint.path}): ${endpoint.summary}${endpoint.access === "x402" ? ` (paid with x402: ${schemesOf(facts, endpoint).join(" or ")})` : ""}`,
  );
  return [
    "# paysvc",
    "",
    `> Pay-per-request, OpenAI-compatible model gateway on ${facts.network.id}: chat completions, a Responses API, image generation and editing, structured decisions and prepaid keys, paid per request in USDC with x402 (no account, no API key), plus free embeddings and a rate-limited free chat.${mppSentence(facts)}`,
    "",
    ...flowSteps(facts),
    "",
    `Prices (USD; every paid quote adds ${facts.network.settlementOverheadUsd} USD settlement overhead${facts.network.settlementGas ? " and a live settlement-gas estimate" : ""}, minimum ${pricingRules.minimumChargeUsd} USD):`,
    ...priceLines(facts),
    "",
    "## Docs",
    "",
    `- [AI-AGENTS.md](${facts.origin}/AI-AGENTS.md): the full guide for agents, with a working client example`,
    `- [OpenAPI](${facts.origin}/openapi.json): every endpoint with request schemas and payment information`,
    `- [x402 manifest](${facts.origin}/.well-known/x402): paid resources and their payment terms`,
    "",
    "## Endpoints",
    "",
    ...endpoints,
    "",
    "## Optional",
    "",
    `- [Models and live prices](${facts.origin}/v1/models)`,
    `- [Health](${facts.origin}/health)`,
    "",
  ].join("\n");
}

/** Paying only for the tokens used with `upto`, where the deployment offers it; nothing elsewhere. */
function uptoLines(facts: DeploymentFacts): string[] {
  if (!facts.upto) return [];
  return [
    "## Paying for the tokens used (upto)",
    "",
    `A 402 for a chat completion or a response, streamed or not, offers a second entry in accepts, after exact: the upto scheme with the same amount as a maximum. Sign it (a Permit2 authorization with the x402 upto proxy as spender; the 402 also declares eip2612GasSponsoring, so a payer whose USDC has not approved Permit2 signs an EIP-2612 permit and needs no gas) and you are charged only what the answer used: input tokens x input rate + the output tokens the answer reports x output rate + the overhead, at least ${pricingRules.minimumChargeUsd} USD, rounded up once, never more than the amount signed. An answer that reports no usage is charged the maximum. A whole answer states the amount settled in usage.cost, X-Paysvc-Cost and PAYMENT-RESPONSE. A stream is settled when its usage event arrives, before that event and [DONE] are sent: the event's usage.cost and usage.cost_details.transaction state it (ask for stream_options.include_usage to see it; there is no PAYMENT-RESPONSE header, as the headers leave first). A stream cut short before its usage is charged the output text it passed on, counted as the input is; one that passed no output, nothing; if you leave mid-stream, you are charged what the upstream reports within 2 s. Your upto payments in flight may not add up to more than your USDC balance and Permit2 allowance (402 payer_limit_exceeded names them): approve Permit2 for the sum of the maxima you run at once.`,
    "",
    "```ts",
    'import { UptoEvmScheme } from "@x402/evm/upto/client";',
    "// With the signer of the example above (its public client reads the Permit2 allowance):",
    "const signer = toClientEvmSigner(account, createPublicClient({ transport: http(process.env.RPC_URL) }));",
    'const client = new x402Client((_version, accepts) => accepts.find((entry) => entry.scheme === "upto") ?? accepts[0]!);',
    "// The same network pattern as registerExactEvmScheme (eip155:*): a client looks a scheme up under the most specific one.",
    `client.register("eip155:*", new UptoEvmScheme(signer));`,
    "registerExactEvmScheme(client, { signer }); // images, decisions and key purchases are exact",
    "```",
    "",
  ];
}

/** Paying many calls from one channel (`batch-settlement`), where the deployment offers it; nothing elsewhere. */
function channelLines(facts: DeploymentFacts): string[] {
  if (!facts.channels) return [];
  return [
    "## Many calls, one deposit (batch-settlement channels)",
    "",
    `A 402 for a chat completion, a response, an image or a decision also offers the batch-settlement scheme, last in accepts: deposit USDC once into a channel (the x402 batch-settlement contract ${BATCH_SETTLEMENT_ADDRESS}; an ERC-3009 authorization, no gas), then pay each request with a voucher you sign for the channel's running total plus at most amount. No transaction and, usually, no facilitator call per request: the deposit is settled with the first request, and the deployment claims the vouchers later, many in one transaction. Each call is charged as upto charges it (chat and Responses: the tokens used; images and decisions: amount), stated in usage.cost and X-Paysvc-Cost; PAYMENT-RESPONSE carries the channel's state. One request at a time per channel: a second at once is refused with invalid_batch_settlement_evm_channel_busy (use a channel per concurrent worker: another salt). A stream's charge comes in its usage event; your next request then gets a 402 carrying the channel's state, from which the official client resyncs by itself. To leave at once, ask for a cooperative refund at ${facts.origin}/v1/channels/refund (the official client's refund(url), below): the facilitator claims what the channel was charged and sends you the rest in one transaction, no gas on your side. Without the deployment, call initiateWithdraw on the contract, then finalizeWithdraw once the channel's withdrawDelay (in the 402's extra) has passed: you get back the deposit less what was charged, which the deployment claims meanwhile.`,
    "",
    "```ts",
    'import { BatchSettlementEvmScheme } from "@x402/evm/batch-settlement/client";',
    "// With the signer of the example above; deposit 1 USDC when the channel opens or runs short:",
    "const channel = new BatchSettlementEvmScheme(signer, { depositStrategy: () => 1_000_000n });",
    'const client = new x402Client((_version, accepts) => accepts.find((entry) => entry.scheme === "batch-settlement") ?? accepts[0]!);',
    'client.register("eip155:*", channel);',
    "registerExactEvmScheme(client, { signer }); // key purchases are exact",
    "// ... many calls later, what the channel holds beyond its charges comes back:",
    `await channel.refund("${facts.origin}/v1/channels/refund");`,
    "```",
    "",
  ];
}

/** How x402 v1 clients pay, on networks with a v1 name; nothing elsewhere. */
function v1ClientLines(facts: DeploymentFacts): string[] {
  const v1Network = facts.network.kind === "evm" ? facts.network.x402V1Network : undefined;
  if (!v1Network) return [];
  return [
    "## x402 v1 clients",
    "",
    `x402 v1 clients (x402-fetch 1.x, x402-axios) pay too: the 402's JSON body is the v1 document (x402Version 1, accepts[0] with maxAmountRequired and network "${v1Network}"); sign it and send X-PAYMENT; the settlement comes back in X-PAYMENT-RESPONSE. The same authorization is spent once, as v1 or v2.`,
    "",
    "```ts",
    'import { wrapFetchWithPayment, decodeXPaymentResponse } from "x402-fetch";',
    `const pay = wrapFetchWithPayment(fetch, walletClient); // a viem wallet client on ${v1Network}`,
    `const response = await pay("${facts.origin}/v1/chat/completions", { method: "POST", headers: { "content-type": "application/json" }, body });`,
    'const settlement = decodeXPaymentResponse(response.headers.get("x-payment-response")!);',
    "```",
    "",
  ];
}

/** GET /AI-AGENTS.md: what an agent needs to use the service, from the same tables as the quotes. */
export function aiAgentsMd(facts: DeploymentFacts): string {
  return [
    `# Using paysvc (${facts.network.id}) from an agent`,
    "",
    `Origin: ${facts.origin}. Network: ${facts.network.id}. Asset: USDC ${facts.network.usdc.address} (${facts.network.usdc.decimals} decimals). Pay-to: ${facts.payTo}.`,
    "",
    "## What is sold, and prices",
    "",
    ...priceLines(facts),
    "",
    `Chat and Responses price: input tokens (o200k_base, as sent) x input rate + max_tokens / max_output_tokens (default ${chatLimits.defaultMaxTokens}) x output rate + ${facts.network.settlementOverheadUsd} USD overhead${facts.network.settlementGas ? " + live settlement gas" : ""}, at least ${pricingRules.minimumChargeUsd} USD, rounded up to whole atomic units. Limits: ${chatLimits.maxInputTokens} input tokens, max_tokens at most ${chatLimits.maxOutputTokens}; the highest quote is ${spendCeiling(facts).highest} USD${facts.network.settlementGas ? " before gas" : ""}. Images: price per image x n + overhead. Decisions: input tokens x ${facts.models.decision.inputUsdPerMillion} USD per 1M + overhead.`,
    "",
    "## The 402 flow",
    "",
    ...flowSteps(facts),
    "",
    "## Client example (official packages)",
    "",
    ["```ts", clientExampleCode(facts), "```"].join("\n"),
    "",
    "Spend controls: the official client refuses payments above $1 and assets it does not know unless allowed, as above. Set maxAmountPerPayment to the most you accept to pay per request.",
    "",
    ...uptoLines(facts),
    ...channelLines(facts),
    ...v1ClientLines(facts),
    ...mppLines(facts),
    "## Safe retries (payment-identifier)",
    "",
    'Every 402 declares the x402 payment-identifier extension (@x402/extensions/payment-identifier). Put an id of your own (16 to 128 letters, digits, - and _) in the payment\'s extensions["payment-identifier"].info.id, e.g. appendPaymentIdentifierToExtensions(payload.extensions, generatePaymentId()). If the connection drops after you paid, send the same request again with the same id (the same payment, or one signed anew): you get the first answer again (header Idempotent-Replayed: true) and are charged once. The same id with another request is refused (409 payment_identifier_conflict); a payment signed anew while the first request under the id is still being answered is refused and not taken (409 payment_identifier_busy): send it again shortly. Answers are kept for the time the extension states (1 hour by default). Streamed answers are not kept and cannot be replayed: retrying a stream needs a new payment.',
    "",
    "## Prepaid keys",
    "",
    `POST ${facts.origin}/prepaid/codes {model, tokens} (or /prepaid/codes/auto) with x402 (or MPP) returns a key (paysvc_pk_...). Use it as the API key: new OpenAI({ apiKey: key, baseURL: "${facts.prepaidApiBase}" }); chat completions and responses are then billed to its token budget (input + output). Status: GET ${facts.prepaidApiBase}/prepaid/status with Authorization: Bearer <key>.`,
    "",
    "## What an answer cost",
    "",
    "Every paid answer says what it cost, in USD as a decimal string: usage.cost in a whole answer with a usage object (chat completions, responses, decisions) and in a stream's final usage event (the chat chunk that stream_options.include_usage adds, and response.usage of response.completed), and the header X-Paysvc-Cost on whole answers (images and key purchases have the header only). Paid with x402, the cost is the settled amount and usage.cost_details is {network, transaction} (transaction null while the settlement's outcome is unknown). With a prepaid key, the cost is the tokens charged at the key's price (its model's input rate, rounded up to a whole atomic unit), with usage.prepaid_charged_tokens and usage.prepaid_remaining_tokens (also the header X-Paysvc-Prepaid-Remaining on whole answers): the key's balance after the call.",
    "",
    "## Free endpoints",
    "",
    `- POST ${facts.origin}/v1/embeddings: ${facts.models.embeddings.id}, input a string or 1 to ${embeddings.maxInputs} strings, encoding_format float or base64.`,
    `- POST ${facts.origin}/v1/free/chat/completions: ${facts.models.freeChat.id}, ${freeChat.windows.map((window) => `${window.limit} requests per ${window.name === "perDay" ? "day" : "10 minutes"}`).join(" and ")} per caller, max_tokens at most ${freeChat.maxTokens}, input at most ${freeChat.maxInputTokens} tokens. Quota: GET ${facts.origin}/v1/free/chat/completions/quota.`,
    `- GET ${facts.origin}/v1/models, GET ${facts.origin}/health, GET ${facts.origin}/.well-known/x402, GET ${facts.origin}/openapi.json.`,
    "",
    "## Errors",
    "",
    ...errorLines,
    "",
  ].join("\n");
}

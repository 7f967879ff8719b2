import { x402Client, x402HTTPClient } from "@x402/core/client";
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from "@x402/core/http";
import { toClientEvmSigner } from "@x402/evm";
import { BatchSettlementEvmScheme } from "@x402/evm/batch-settlement/client";
import { UptoEvmScheme } from "@x402/evm/upto/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import OpenAI from "openai";
import { createPublicClient, createTestClient, createWalletClient, erc20Abi, http } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { polygon as polygonChain } from "viem/chains";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Mppx, evm } from "mppx/client";
import { waitFor } from "../cli/dev-stack/wait-for";
import { getNetwork, type EvmNetwork } from "../networks";
import { decimalToAtomic } from "../server/core/money";
import { balanceOf, chatBody, payingClient, quoteOf } from "./support/network-stack";
import { paidStream, statedCost } from "./support/paid-stream";
import { startPostgresStack } from "./support/postgres-stack";
import { requestFrom } from "./support/request-from";
import { stalledStream } from "./support/stalled-stream";
import { paysvc } from "./support/run-paysvc";
import {
  createSIWxPayload,
  encodeSIWxHeader,
  type SIWxExtensionInfo,
  type SupportedChain,
} from "@x402/extensions/sign-in-with-x";

const NETWORK = "eip155:5042";
const USDC = "0x3600000000000000000000000000000000000000" as const;
/** Short, so that a dead instance's reservation expires within the test; live ones are extended every second. */
const RESERVATION_TTL_SECONDS = 3;

/**
 * The journeys that touch state, on two app instances over one real PostgreSQL server: whichever instance a
 * request reaches, a payment is taken once, a budget is never overspent, the free tier counts per caller, and a
 * quote is held. eip155:5042 prices live settlement gas, so its quotes are held in the database.
 */
describe("two instances over one PostgreSQL database", () => {
  let started: Awaited<ReturnType<typeof startPostgresStack>>;
  let urls: string[];
  beforeAll(async () => {
    started = await startPostgresStack(NETWORK, {
      instances: 2,
      appEnv: { PREPAID_RESERVATION_TTL_SECONDS: String(RESERVATION_TTL_SECONDS) },
    });
    urls = started.stack.instances.map((instance) => instance.url);
  });
  afterAll(async () => {
    await started?.remove();
  });

  const payer = (index: number) => started.stack.payers[index]!;
  const paidFetch = (index: number) =>
    wrapFetchWithPayment(fetch, payingClient(started.stack, payer(index).privateKey, USDC, NETWORK));
  const balance = (address: string) => balanceOf(started.stack, USDC, address);
  const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });

  it("runs two instances on consecutive ports that report PostgreSQL in /health", async () => {
    expect(urls).toHaveLength(2);
    for (const url of urls) {
      const health = await (await fetch(`${url}/health`)).json();
      expect(health.status).toBe("ok");
      expect(health.checks.database).toMatchObject({ engine: "postgresql", status: "up" });
    }
  });

  it("settles a paid call at the second instance once, in the shared ledger", async () => {
    const body = chatBody("paid at the second instance");
    const before = await balance(payer(1).address);
    const response = await paidFetch(1)(`${urls[1]}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(200);
    await response.json();
    // The ledger records the settlement once the answer is out.
    const settledRow = async () =>
      (
        await started.query<{ status: string; amount: string; transaction: string }>(
          "select status, amount::text, transaction from payments where payer = $1 and status = 'settled'",
          [payer(1).address.toLowerCase()],
        )
      )[0];
    await waitFor(async () => (await settledRow()) !== undefined, { timeoutMs: 5000, what: "the settled row" });
    const row = await settledRow();
    expect(row!.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(before - (await balance(payer(1).address))).toBe(BigInt(row!.amount));
  });

  it("serves one signed payment sent to both instances at once exactly once, and charges it once", async () => {
    const body = chatBody("one payment, two instances");
    const required = await quoteOf({ ...started.stack, appUrl: urls[0]! }, "/v1/chat/completions", body);
    const payload = await new x402HTTPClient(
      payingClient(started.stack, payer(2).privateKey, USDC, NETWORK),
    ).createPaymentPayload(required);
    const signature = encodePaymentSignatureHeader(payload);
    const price = BigInt(required.accepts[0]!.amount);
    const before = await balance(payer(2).address);
    const responses = await Promise.all(
      [0, 1, 0, 1].map((index) => post(`${urls[index]}/v1/chat/completions`, body, { "PAYMENT-SIGNATURE": signature })),
    );
    const answers = await Promise.all(
      responses.map(async (response) => ({ status: response.status, body: await response.json() })),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 402, 402, 402]);
    for (const answer of answers.filter((candidate) => candidate.status === 402)) {
      expect(answer.body.error.code).toBe("payment_already_used");
    }
    expect(before - (await balance(payer(2).address))).toBe(price);
    const rows = () =>
      started.query<{ status: string }>("select status from payments where payer = $1", [
        payer(2).address.toLowerCase(),
      ]);
    // A whole answer goes out before its settlement is recorded (docs/ledger.md): wait for the record.
    await waitFor(async () => (await rows()).every((row) => row.status !== "verified"), {
      timeoutMs: 5000,
      intervalMs: 50,
      what: "the settled payment's row to be recorded",
    });
    expect(await rows()).toEqual([{ status: "settled" }]);
  });

  it("takes MPP beside x402 on both: a challenge one issued is paid at the other, once; both kinds side by side", async () => {
    const network = getNetwork(NETWORK) as EvmNetwork;
    const account = privateKeyToAccount(payer(4).privateKey as `0x${string}`);
    const mpp = Mppx.create({
      methods: [evm({ account, maxAmount: "5", authorization: network.usdc.eip712, decimals: network.usdc.decimals })],
      polyfill: false,
    });
    const body = chatBody("an MPP challenge of one instance, paid at the other");
    const challenged = await post(`${urls[0]}/v1/chat/completions`, body);
    expect(challenged.status).toBe(402);
    const credential = await mpp.createCredential(challenged);
    const price = BigInt(
      (await quoteOf({ ...started.stack, appUrl: urls[0]! }, "/v1/chat/completions", body)).accepts[0]!.amount,
    );
    const before = await balance(payer(4).address);
    const paid = await post(`${urls[1]}/v1/chat/completions`, body, { authorization: credential });
    expect(paid.status).toBe(200);
    expect(paid.headers.get("payment-receipt")).toBeTruthy();
    await paid.json();
    const replayed = await post(`${urls[0]}/v1/chat/completions`, body, { authorization: credential });
    expect(replayed.status).toBe(402);
    expect((await replayed.json()).error.code).toBe("payment_already_used");
    expect(before - (await balance(payer(4).address))).toBe(price);
    // x402 at one instance and MPP at the other, at once.
    const x402Before = await balance(payer(6).address);
    const mppBefore = await balance(payer(4).address);
    const call = (pay: typeof fetch, url: string) =>
      pay(`${url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      }).then(async (response) => [response.status, await response.text()][0]);
    const statuses = await Promise.all(
      [0, 1, 2].flatMap(() => [call(paidFetch(6), urls[0]!), call(mpp.fetch as typeof fetch, urls[1]!)]),
    );
    expect(statuses).toEqual(Array(6).fill(200));
    expect(x402Before - (await balance(payer(6).address))).toBe(3n * price);
    expect(mppBefore - (await balance(payer(4).address))).toBe(3n * price);
    const methods = await started.query<{ method: string; status: string }>(
      "select method, status from payments where payer = $1 order by id",
      [payer(4).address.toLowerCase()],
    );
    expect(methods.map((row) => row.method)).toEqual(Array(4).fill("mpp"));
  });

  it("keeps a quote taken at one instance payable at the other at its held amount after gas moved", async () => {
    const body = chatBody("quoted at one, paid at the other");
    const held = await quoteOf({ ...started.stack, appUrl: urls[0]! }, "/v1/chat/completions", body);
    const gasPrice = BigInt((held.extensions?.quote as Record<string, string>).gas_price_wei!);
    const testClient = createTestClient({ mode: "anvil", transport: http(started.stack.chainRpcUrl) });
    await testClient.setNextBlockBaseFeePerGas({ baseFeePerGas: gasPrice * 1000n });
    await testClient.mine({ blocks: 1 });
    const fresh = await quoteOf(
      { ...started.stack, appUrl: urls[1]! },
      "/v1/chat/completions",
      chatBody("a fresh quote"),
    );
    expect(BigInt(fresh.accepts[0]!.amount)).toBeGreaterThan(BigInt(held.accepts[0]!.amount));
    // The other instance quotes the held amount for the same body, and takes a payment of it.
    const again = await quoteOf({ ...started.stack, appUrl: urls[1]! }, "/v1/chat/completions", body);
    expect(again.accepts).toEqual(held.accepts);
    const before = await balance(payer(3).address);
    const response = await paidFetch(3)(`${urls[1]}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(200);
    await response.json();
    expect(before - (await balance(payer(3).address))).toBe(BigInt(held.accepts[0]!.amount));
    await testClient.setNextBlockBaseFeePerGas({ baseFeePerGas: gasPrice });
    await testClient.mine({ blocks: 1 });
  });

  it("counts one caller's free chat requests over both instances: exactly 10 of 30 at once are served", async () => {
    const caller = "127.0.0.4";
    const responses = await Promise.all(
      Array.from({ length: 30 }, (_, index) =>
        requestFrom(caller, "POST", "/v1/free/chat/completions", {
          base: urls[index % 2],
          body: { messages: [{ role: "user", content: `burst ${index}` }] },
        }),
      ),
    );
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(10);
    expect(statuses.filter((status) => status === 429)).toHaveLength(20);
    for (const url of urls) {
      const quota = (await requestFrom(caller, "GET", "/v1/free/chat/completions/quota", { base: url })).json();
      expect(quota).toMatchObject({ per10Min: { limit: 10, used: 10 }, perDay: { used: 10 } });
    }
  });

  /** A prepaid key bought at the first instance. */
  async function buyKey(tokens: number, payerIndex: number): Promise<string> {
    const response = await paidFetch(payerIndex)(`${urls[0]}/prepaid/codes`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "vendor-a/gpt-6-luna", tokens }),
    });
    expect(response.status).toBe(201);
    return ((await response.json()) as { code: string }).code;
  }
  const keyStatus = async (url: string, code: string) =>
    (await (await fetch(`${url}/v1/prepaid/status`, { headers: { authorization: `Bearer ${code}` } })).json()) as {
      valid: boolean;
      tokens: { total: number; used: number; reserved: number; remaining: number };
    };

  it("never overspends a prepaid key whose calls are spread over both instances", async () => {
    const code = await buyKey(100_000, 4);
    const samples: { used: number; reserved: number }[] = [];
    let polling = true;
    const poller = (async () => {
      for (let index = 0; polling; index++) samples.push((await keyStatus(urls[index % 2]!, code)).tokens);
    })();
    const statuses = await Promise.all(
      Array.from({ length: 40 }, async (_, index) => {
        const response = await post(
          `${urls[index % 2]}/v1/chat/completions`,
          {
            model: "vendor-a/gpt-6-luna",
            messages: [{ role: "user", content: `[paysvc-dev-long] request ${index}` }],
            max_tokens: 30_000,
            stream: index % 4 < 2,
          },
          { authorization: `Bearer ${code}` },
        );
        await response.text();
        return response.status;
      }),
    );
    polling = false;
    await poller;
    expect(statuses.every((status) => status === 200 || status === 429)).toBe(true);
    expect(statuses.filter((status) => status === 200).length).toBeGreaterThanOrEqual(4);
    expect(samples.length).toBeGreaterThan(1);
    for (const sample of samples) expect(sample.used + sample.reserved).toBeLessThanOrEqual(100_000);
    for (const url of urls) {
      expect(await keyStatus(url, code)).toMatchObject({
        valid: false,
        tokens: { total: 100_000, used: 100_000, reserved: 0, remaining: 0 },
      });
    }
  });

  it("keeps one channel's running total across both instances: calls alternating between them agree to the unit", async () => {
    const account = privateKeyToAccount(payer(5).privateKey as `0x${string}`);
    const signer = toClientEvmSigner(account, createPublicClient({ transport: http(started.stack.chainRpcUrl) }));
    const client = new x402Client(
      (_version, accepts) => accepts.find((entry) => entry.scheme === "batch-settlement") ?? accepts[0]!,
    ).register("eip155:*", new BatchSettlementEvmScheme(signer, { depositStrategy: () => 1_000_000n }));
    client.setSpendControls({
      allowedAssets: [{ network: NETWORK, asset: USDC, maxAmountPerPayment: "5000000" }],
    });
    const paid = wrapFetchWithPayment(fetch, client);
    let stated = 0n;
    let channelId = "";
    for (let index = 0; index < 10; index++) {
      const answer = await paid(`${urls[index % 2]!}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(chatBody(`channel at instance ${index % 2}`)),
      });
      expect(answer.status).toBe(200);
      stated += decimalToAtomic(((await answer.json()) as { usage: { cost: string } }).usage.cost, 6);
      const settlement = decodePaymentResponseHeader(answer.headers.get("payment-response")!);
      channelId = (settlement.extra as { channelState: { channelId: string } }).channelState.channelId;
    }
    const [channel] = await started.query<{ charged: string }>(
      "select charged_cumulative_amount::text as charged from payment_channels where channel_id = $1",
      [channelId.toLowerCase()],
    );
    expect(BigInt(channel!.charged)).toBe(stated);
    // Each charge's ledger row is written beside its answer.
    const ledger = async () =>
      (
        await started.query<{ rows: string; sum: string }>(
          "select count(*)::text as rows, sum(settled_amount)::text as sum from payments where nonce like $1",
          [`${channelId.toLowerCase()}:%`],
        )
      )[0];
    await expect.poll(ledger, { timeout: 5000 }).toEqual({ rows: "10", sum: String(stated) });
  });

  it("serves a payer no more than it pays when its eight upto streams are spread over both instances", async () => {
    const request = {
      ...chatBody("upto at both instances"),
      max_tokens: 2000,
      stream: true,
      stream_options: { include_usage: true },
    };
    const required = await quoteOf(started.stack, "/v1/chat/completions", request);
    const maximum = BigInt(required.accepts.find((entry) => entry.scheme === "upto")!.amount);
    // A new wallet holding exactly one maximum, with no Permit2 allowance: each payment carries a permit.
    const key = generatePrivateKey();
    const account = privateKeyToAccount(key);
    const rpc = started.stack.chainRpcUrl!;
    const transport = http(rpc);
    const bank = createWalletClient({
      account: privateKeyToAccount(payer(7).privateKey as `0x${string}`),
      chain: { ...polygonChain, id: 5042, rpcUrls: { default: { http: [rpc] } } },
      transport,
    });
    const funding = await bank.writeContract({
      address: USDC,
      abi: erc20Abi,
      functionName: "transfer",
      args: [account.address, maximum],
    });
    await createPublicClient({ transport }).waitForTransactionReceipt({ hash: funding });
    const signer = toClientEvmSigner(account, createPublicClient({ transport }));
    const client = new x402Client(
      (_version, accepts) => accepts.find((entry) => entry.scheme === "upto") ?? accepts[0]!,
    );
    client.register("eip155:*", new UptoEvmScheme(signer));
    client.setSpendControls({ allowedAssets: [{ network: NETWORK, asset: USDC, maxAmountPerPayment: "5000000" }] });
    const pay = wrapFetchWithPayment(fetch, client);

    const outcomes = await Promise.all(
      Array.from({ length: 8 }, (_, index) => paidStream(pay, `${urls[index % 2]!}/v1/chat/completions`, request)),
    );

    const paid = maximum - (await balance(account.address));
    expect(statedCost(outcomes)).toBe(paid);
    expect(outcomes.filter((outcome) => outcome.served)).toHaveLength(1);
    for (const outcome of outcomes.filter((outcome) => !outcome.served)) {
      expect(outcome).toEqual({ served: false, status: 402, code: "payer_limit_exceeded" });
    }
    const rows = await started.query<{ status: string }>("select status from payments where payer = $1", [
      account.address.toLowerCase(),
    ]);
    expect(rows.filter((row) => row.status === "settled")).toHaveLength(1);
    expect(rows.map((row) => row.status)).not.toContain("unpaid");
    expect(rows.map((row) => row.status)).not.toContain("settle_unknown");
  });

  it("refuses a key rotated at one instance, or revoked by the operator, on both at once", async () => {
    const bought = await paidFetch(3)(`${urls[0]}/prepaid/codes`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "vendor-a/gpt-6-luna", tokens: 100_000 }),
    });
    const { id, code } = (await bought.json()) as { id: number; code: string };
    // Both instances answer as one origin (the first's, as behind a load balancer): the second's challenge names it,
    // so the message is signed for the origin the caller knows, and sent to the second instance.
    const challenged = await fetch(`${urls[1]}/v1/prepaid/keys/rotate`, { method: "POST" });
    const { extensions } = decodePaymentRequiredHeader(challenged.headers.get("payment-required")!);
    const challenge = extensions!["sign-in-with-x"] as { info: SIWxExtensionInfo; supportedChains: SupportedChain[] };
    const info = { ...challenge.info, ...challenge.supportedChains[0]! };
    const account = privateKeyToAccount(payer(3).privateKey as `0x${string}`);
    const signed = encodeSIWxHeader(await createSIWxPayload(info, account, info.uri));
    const rotated = await fetch(`${urls[1]}/v1/prepaid/keys/rotate`, {
      method: "POST",
      headers: { "content-type": "application/json", "sign-in-with-x": signed },
      body: JSON.stringify({ key: id }),
    });
    expect(rotated.status).toBe(200);
    const fresh = ((await rotated.json()) as { code: string }).code;
    const statusAt = async (url: string, key: string) =>
      (await fetch(`${url}/v1/prepaid/status`, { headers: { authorization: `Bearer ${key}` } })).status;
    const at = Date.now();
    expect(await Promise.all(urls.map((url) => statusAt(url, code)))).toEqual([401, 401]);
    expect(Date.now() - at).toBeLessThan(1000);
    expect((await keyStatus(urls[0]!, fresh)).tokens.remaining).toBe(100_000);

    // The operator revokes it while a stream spends it: the next call is refused on both instances.
    const stream = await stalledStream(urls[0]!, fresh);
    const revoked = await paysvc(["keys", "revoke", String(id)], 60_000, {
      DATABASE_URL: started.databaseUrl,
      NETWORK,
    });
    expect(revoked).toMatchObject({ code: 0, stdout: expect.stringContaining(`revoked key ${id}`) });
    for (const url of urls) {
      const refused = await post(
        `${url}/v1/chat/completions`,
        { model: "vendor-a/gpt-6-luna", messages: [{ role: "user", content: "after" }], max_tokens: 5 },
        { authorization: `Bearer ${fresh}` },
      );
      expect(refused.status).toBe(401);
    }
    stream.close();
  });

  it("releases the reservation of an instance killed mid-stream once it expires, charges nothing twice, and the key serves again", async () => {
    const code = await buyKey(100_000, 5);
    const openai = (url: string) => new OpenAI({ apiKey: code, baseURL: `${url}/v1`, maxRetries: 0 });
    const stream = await stalledStream(urls[1]!, code);
    const held = await keyStatus(urls[0]!, code);
    expect(held.tokens.reserved).toBeGreaterThan(0);
    expect(held.tokens.used).toBe(0);

    const pid = started.stack.instances[1]!.pid();
    expect(pid).toBeTypeOf("number");
    process.kill(pid!, "SIGKILL");
    await expect(stream.readToEnd()).rejects.toThrow();
    // Still held while the reservation lives, then released; nothing was charged for the dead call.
    await waitFor(async () => (await keyStatus(urls[0]!, code)).tokens.reserved === 0, {
      timeoutMs: (RESERVATION_TTL_SECONDS + 5) * 1000,
      intervalMs: 250,
      what: "the dead instance's reservation to expire",
    });
    expect((await keyStatus(urls[0]!, code)).tokens).toEqual({
      total: 100_000,
      used: 0,
      reserved: 0,
      remaining: 100_000,
    });

    const completion = await openai(urls[0]!).chat.completions.create({
      model: "vendor-a/gpt-6-luna",
      messages: [{ role: "user", content: "and now a short one" }],
      max_tokens: 50,
    });
    const charged = completion.usage!.prompt_tokens + completion.usage!.completion_tokens;
    expect((await keyStatus(urls[0]!, code)).tokens).toMatchObject({ used: charged, reserved: 0 });
  });
});

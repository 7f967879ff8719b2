import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, describe, expect, it } from "vitest";
import { balances, quote, stack } from "./support/payments";

const payer = () => stack().payers[7]!;
const clients: Client[] = [];

/** The official MCP client spawning `paysvc mcp` over stdio, as an agent host does. */
async function connect(overrides: Record<string, string> = {}): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ["cli/bin.mjs", "mcp"],
    env: {
      PATH: process.env.PATH ?? "",
      PAYSVC_WALLET_PRIVATE_KEY: payer().privateKey,
      PAYSVC_ORIGIN: stack().appUrl,
      PAYSVC_PAY_TO: stack().payTo,
      PAYSVC_MAX_PAYMENT_USD: "0.50",
      ...overrides,
    },
    stderr: "pipe",
  });
  const client = new Client({ name: "paysvc-e2e", version: "1.0.0" });
  await client.connect(transport);
  clients.push(client);
  return client;
}

afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
});

const request = {
  model: "vendor-a/gpt-6-luna",
  messages: [{ role: "user" as const, content: "hello from an agent" }],
  max_tokens: 100,
};
const textOf = (result: Record<string, unknown>) => (result.content as { type: string; text: string }[])[0]!.text;

describe("paysvc mcp", () => {
  it("lists both tools with input schemas, and list_models returns the four GPT models", async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(["chat_completion", "list_models"]);
    const chat = tools.find((tool) => tool.name === "chat_completion")!;
    expect(Object.keys(chat.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(["model", "messages", "max_tokens", "temperature"]),
    );
    const models = JSON.parse(textOf(await client.callTool({ name: "list_models", arguments: {} }))) as {
      id: string;
    }[];
    expect(models.map((model) => model.id)).toEqual([
      "vendor-a/gpt-5.6-sol",
      "vendor-a/gpt-5.6-terra",
      "vendor-a/gpt-6-luna",
      "vendor-a/gpt-6-sol",
    ]);
  });

  it("chat_completion answers, pays exactly the quote and reports the payment", async () => {
    const price = BigInt((await quote("/v1/chat/completions", request)).accepts[0]!.amount);
    const before = await balances(payer().address);
    const client = await connect();
    const result = await client.callTool({ name: "chat_completion", arguments: request });
    expect(result.isError).toBeFalsy();
    const answer = JSON.parse(textOf(result));
    expect(answer.answer).toContain("hello from an agent");
    expect(answer.usage.total_tokens).toBeGreaterThan(0);
    expect(answer.payment).toMatchObject({ amount: price.toString(), network: "eip155:137", payTo: stack().payTo });
    expect(answer.payment.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    const after = await balances(payer().address);
    expect(before.payer - after.payer).toBe(price);
    expect(textOf(result)).not.toContain(payer().privateKey.slice(2));
  });

  it("refuses a quote above the maximum, and pays nothing", async () => {
    const before = await balances(payer().address);
    const client = await connect({ PAYSVC_MAX_PAYMENT_USD: "0.001" });
    const result = await client.callTool({ name: "chat_completion", arguments: request });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(
      /the quote is 0\.\d+ USD, above the limit of 0\.001 USD per request; nothing was paid/,
    );
    expect(await balances(payer().address)).toEqual(before);
  });

  it("refuses to pay a recipient other than the configured one", async () => {
    const before = await balances(payer().address);
    const client = await connect({ PAYSVC_PAY_TO: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC" });
    const result = await client.callTool({ name: "chat_completion", arguments: request });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/not the configured recipient 0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC/);
    expect(await balances(payer().address)).toEqual(before);
  });

  it("uses the per-network recipient map", async () => {
    const client = await connect({
      PAYSVC_PAY_TO: "",
      PAYSVC_PAY_TO_BY_NETWORK: JSON.stringify({ "eip155:137": stack().payTo }),
    });
    const result = await client.callTool({ name: "chat_completion", arguments: request });
    expect(result.isError).toBeFalsy();
  });

  it("refuses to start with a bad configuration, without printing the key", async () => {
    const { spawnSync } = await import("node:child_process");
    const run = spawnSync(process.execPath, ["cli/bin.mjs", "mcp"], {
      env: {
        PATH: process.env.PATH,
        PAYSVC_WALLET_PRIVATE_KEY: "0x1234",
        PAYSVC_ORIGIN: "not a url",
        PAYSVC_MAX_PAYMENT_USD: "lots",
      } as unknown as NodeJS.ProcessEnv,
      encoding: "utf8",
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/PAYSVC_WALLET_PRIVATE_KEY: must be a 32-byte hex private key/);
    expect(run.stderr).toMatch(/PAYSVC_ORIGIN/);
    expect(run.stderr).toMatch(/PAYSVC_MAX_PAYMENT_USD/);
    expect(run.stderr).not.toContain("0x1234");
  });
});

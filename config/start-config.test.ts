import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { problemsOf } from "./__fixtures__/problems-of";
import { solanaDevAccount } from "../cli/dev-stack/solana-dev-accounts";
import { loadStartConfig } from "./start-config";

const SOLANA = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";
/** Account 1 of the public mnemonic "test test ... junk" (the development pay-to) and account 0's key. */
const DEV_PAY_TO = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const DEV_FACILITATOR_KEY = "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80";
/** Development keypair 1 of the embedded Solana validator (cli/dev-stack/solana-dev-accounts.ts). */
const SOLANA_DEV_PAY_TO = "54R8Q24jSGPFUXDGczHzseftYug7EEKek53x1ATdYqjF";

/** An operator's complete production environment, with addresses and keys of their own. */
const production = (overrides: Record<string, string> = {}) => ({
  NETWORK: "eip155:137",
  PAY_TO: privateKeyToAccount(generatePrivateKey()).address,
  FACILITATOR_URL: "https://facilitator.example",
  UPSTREAM_BASE_URL: "https://api.example/v1",
  DATABASE_URL: "file:/var/lib/paysvc/paysvc.sqlite",
  ...overrides,
});

describe("paysvc start's configuration", () => {
  it("takes an operator's own accounts and a database that outlives the process", () => {
    expect(problemsOf(() => loadStartConfig(production()))).toEqual([]);
    expect(
      loadStartConfig(
        production({
          FACILITATOR_URL: "",
          CHAIN_RPC_URL: "https://rpc.example",
          FACILITATOR_PRIVATE_KEY: generatePrivateKey(),
        }),
      ).builtInFacilitator?.rpcUrl,
    ).toBe("https://rpc.example");
    expect(loadStartConfig(production({ DATABASE_URL: "postgres://paysvc@db/paysvc" })).service.databaseUrl).toBe(
      "postgres://paysvc@db/paysvc",
    );
  });

  it("refuses the development pay-to, in one line naming PAY_TO", () => {
    for (const payTo of [DEV_PAY_TO, DEV_PAY_TO.toLowerCase()]) {
      expect(problemsOf(() => loadStartConfig(production({ PAY_TO: payTo })))).toEqual([
        `PAY_TO: ${payTo} is account 1 of the public development mnemonic "test test ... junk", whose private key is public: anyone could take what is paid to it; set an address of your own`,
      ]);
    }
    expect(problemsOf(() => loadStartConfig(production({ NETWORK: SOLANA, PAY_TO: SOLANA_DEV_PAY_TO })))).toEqual([
      expect.stringMatching(/^PAY_TO: 54R8Q24j\S+ is development keypair 1 of paysvc's embedded Solana validator/),
    ]);
  });

  it("refuses a development facilitator key, naming the variable and never the key", () => {
    const problems = problemsOf(() =>
      loadStartConfig(
        production({
          FACILITATOR_URL: "",
          CHAIN_RPC_URL: "https://rpc.example",
          FACILITATOR_PRIVATE_KEY: DEV_FACILITATOR_KEY,
        }),
      ),
    );
    expect(problems).toEqual([
      'FACILITATOR_PRIVATE_KEY: is the key of account 0 of the public development mnemonic "test test ... junk" (0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266), which is public: anyone could spend from it; set a key of your own',
    ]);
  });

  it("refuses a Solana development keypair as the facilitator's key", async () => {
    const { privateKey, address } = await solanaDevAccount(0);
    const env = production({
      NETWORK: SOLANA,
      PAY_TO: "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin",
      FACILITATOR_URL: "",
      CHAIN_RPC_URL: "https://rpc.example",
      FACILITATOR_PRIVATE_KEY: privateKey,
    });
    expect(problemsOf(() => loadStartConfig(env))).toEqual([
      `FACILITATOR_PRIVATE_KEY: is the key of development keypair 0 of paysvc's embedded Solana validator (${address}), which is public: anyone could spend from it; set a key of your own`,
    ]);
  });

  it("refuses an in-memory SQLite database: the ledger must survive a restart", () => {
    for (const url of [":memory:", "file::memory:", "file::memory:?cache=shared"]) {
      expect(
        problemsOf(() => loadStartConfig(production({ DATABASE_URL: url }))),
        url,
      ).toEqual([
        `DATABASE_URL: ${url} is an in-memory SQLite database, lost when the process stops, and the ledger of payments and prepaid keys must survive a restart; set a file (file:/var/lib/paysvc/paysvc.sqlite) or postgres:// URL`,
      ]);
    }
  });
});

import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { problemsOf } from "./__fixtures__/problems-of";
import { solanaDevAccount } from "../cli/dev-stack/solana-dev-accounts";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { redactedUrl } from "./host-urls";
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

describe("credentials stay with their host", () => {
  it("refuses a plain-http provider or facilitator beyond this machine, in one line; loopback may be http", () => {
    expect(
      problemsOf(() => loadStartConfig(production({ UPSTREAM_BASE_URL: "http://provider.invalid/v1?key=k" }))),
    ).toEqual([
      "UPSTREAM_BASE_URL: http://provider.invalid/… is plain http on a host that is not this machine: credentials and payments would cross the network in the clear; use https (http is accepted for localhost, 127.0.0.1 and [::1] only)",
    ]);
    expect(problemsOf(() => loadStartConfig(production({ FACILITATOR_URL: "http://facilitator.invalid" })))).toEqual([
      expect.stringMatching(
        /^FACILITATOR_URL: http:\/\/facilitator\.invalid is plain http on a host that is not this machine/,
      ),
    ]);
    for (const local of ["http://127.0.0.1:8080/v1", "http://localhost:8080/v1", "http://[::1]:8080/v1"]) {
      expect(
        problemsOf(() => loadStartConfig(production({ UPSTREAM_BASE_URL: local, FACILITATOR_URL: local }))),
      ).toEqual([]);
    }
  });

  it("refuses a catalog route whose key is one of the service's own secrets", () => {
    const directory = mkdtempSync(join(tmpdir(), "paysvc-catalog-"));
    const file = join(directory, "catalog.json");
    const route = (key: string) => ({ provider: "p", base_url: "https://p.example/v1", api_key_env: key, model: "m" });
    for (const secret of ["FACILITATOR_PRIVATE_KEY", "CDP_API_KEY_SECRET", "METRICS_TOKEN", "DATABASE_URL"]) {
      writeFileSync(
        file,
        JSON.stringify({
          extends: "default",
          models: [
            { kind: "chat", id: "x/chat", prices: { input_per_1m: "1", output_per_1m: "1" }, routes: [route(secret)] },
          ],
        }),
      );
      const problems = problemsOf(() =>
        loadStartConfig(
          production({
            PAYSVC_CATALOG: file,
            [secret]: secret === "DATABASE_URL" ? "file:/var/lib/x.sqlite" : "s3cret-value-of-the-service",
          }),
        ),
      );
      expect(problems).toContainEqual(
        `${file}: models[0].routes[0].api_key_env: ${secret} is one of this service's own secrets, and a route's key is sent to its provider; name the variable that holds the provider's API key`,
      );
    }
    rmSync(directory, { recursive: true, force: true });
  });

  it("prints URLs without user info, path or query", () => {
    expect(redactedUrl("https://user:pass@rpc.example:8545/v2/abcdef?apikey=k")).toBe("https://…@rpc.example:8545/…");
    expect(redactedUrl("https://api.example")).toBe("https://api.example");
  });
});

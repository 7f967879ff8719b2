import { describe, expect, it } from "vitest";
import { problemsOf } from "./__fixtures__/problems-of";
import { loadReconcileConfig } from "./ledger-config";

// A key no development account has (the facilitator's key is only checked for its format here).
const KEY = `0x${"42".repeat(32)}`;
const PAY_TO = "0x2546BcD3c84621e976D8185a91A922aE77ECEc30";

describe("paysvc ledger reconcile's configuration", () => {
  it("is the embedded stack of `npm start` at its default local URLs when neither chain nor facilitator is set", () => {
    expect(loadReconcileConfig({})).toMatchObject({
      chainRpcUrl: "http://127.0.0.1:8545",
      facilitators: [{ name: "facilitator", url: "http://127.0.0.1:4020", auth: { kind: "none" } }],
      embeddedStack: true,
      databaseUrl: "file:./data/paysvc.sqlite",
    });
  });

  it("settles through FACILITATOR_URL, reading the chain at CHAIN_RPC_URL or else the network's public RPC", () => {
    expect(loadReconcileConfig({ FACILITATOR_URL: "https://x402.example/" })).toMatchObject({
      chainRpcUrl: "https://polygon-rpc.com",
      facilitators: [{ name: "facilitator", url: "https://x402.example" }],
      embeddedStack: false,
    });
    expect(
      loadReconcileConfig({ FACILITATOR_URL: "https://x402.example", CHAIN_RPC_URL: "https://rpc.example" }),
    ).toMatchObject({ chainRpcUrl: "https://rpc.example", facilitators: [{ url: "https://x402.example" }] });
  });

  it("names the built-in facilitator for CHAIN_RPC_URL + FACILITATOR_PRIVATE_KEY without FACILITATOR_URL", () => {
    const env = { CHAIN_RPC_URL: "https://rpc.example", FACILITATOR_PRIVATE_KEY: KEY, PAY_TO };
    expect(loadReconcileConfig(env)).toMatchObject({
      chainRpcUrl: "https://rpc.example",
      facilitators: [{ name: "built-in", url: undefined, builtIn: true }],
      builtIn: { rpcUrl: "https://rpc.example", privateKey: KEY, payTo: PAY_TO },
      embeddedStack: false,
    });
    expect(
      problemsOf(() =>
        loadReconcileConfig({ CHAIN_RPC_URL: "https://rpc.example", FACILITATOR_PRIVATE_KEY: "0x1234" }),
      ),
    ).toEqual(["FACILITATOR_PRIVATE_KEY: must be a 32-byte hex private key (0x + 64 hex digits)"]);
    // It settles payments to the deployment's pay-to only: it must know it.
    expect(problemsOf(() => loadReconcileConfig({ ...env, PAY_TO: undefined }))).toEqual([
      expect.stringMatching(/^PAY_TO: required by the built-in facilitator/),
    ]);
  });

  it("needs a facilitator with CHAIN_RPC_URL alone, except to check (which settles nothing)", () => {
    expect(problemsOf(() => loadReconcileConfig({ CHAIN_RPC_URL: "https://rpc.example" }))).toEqual([
      expect.stringMatching(/^FACILITATOR_URL: required with CHAIN_RPC_URL.*FACILITATORS.*or FACILITATOR_PRIVATE_KEY/),
    ]);
    expect(loadReconcileConfig({ CHAIN_RPC_URL: "https://rpc.example" }, { check: true })).toMatchObject({
      chainRpcUrl: "https://rpc.example",
      facilitators: [],
    });
  });
});

import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { x402Client } from "@x402/core/client";
import { decodePaymentResponseHeader } from "@x402/core/http";
import { toClientEvmSigner } from "@x402/evm";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import Database from "better-sqlite3";
import { createPublicClient, http, type Abi } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { pidListeningOn } from "../bench/lib/process-memory";
import { polygon } from "../networks/eip155-137";
import { localUsdcAbi } from "../cli/dev-stack/local-chain";
import { FREE_PORTS } from "./support/free-ports";

/** True while something accepts TCP connections on the port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: "127.0.0.1" });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

async function eventually(check: () => Promise<boolean>, timeoutMs = 15_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

const PAY_TO = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

function usdcBalanceAt(chainPort: number, owner: `0x${string}`): Promise<bigint> {
  const chain = createPublicClient({ transport: http(`http://127.0.0.1:${chainPort}`) });
  const read = { address: polygon.usdc.address, abi: localUsdcAbi as Abi, functionName: "balanceOf", args: [owner] };
  return chain.readContract(read) as Promise<bigint>;
}

interface Started {
  child: ChildProcess;
  output: () => string;
}

const started: Started[] = [];
const dataDirs: string[] = [];

/** A new data directory, removed after the test. */
function newDataDir(): string {
  const dataDir = mkdtempSync(join(tmpdir(), "paysvc-lifecycle-"));
  dataDirs.push(dataDir);
  return dataDir;
}

/** Runs `paysvc dev` exactly as `npm start` does, every port 0 (picked free). */
async function startCli(extraEnv: Record<string, string> = {}, dataDir = newDataDir()): Promise<Started> {
  const child = spawn(process.execPath, ["cli/bin.mjs", "dev"], {
    env: {
      ...process.env,
      ...FREE_PORTS,
      DATA_DIR: dataDir,
      DATABASE_URL: `file:${join(dataDir, "paysvc.sqlite")}`,
      ...extraEnv,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const entry: Started = { child, output: () => output };
  started.push(entry);
  return entry;
}

/** The port of each service, from the lines `paysvc dev` printed. */
function printedPorts(output: string): Record<"app" | "chain" | "facilitator" | "upstream", number> {
  const port = (name: string) => {
    const match = new RegExp(`^${name}\\s+http://127\\.0\\.0\\.1:(\\d+)`, "m").exec(output);
    if (!match) throw new Error(`no ${name} line in:\n${output}`);
    return Number(match[1]);
  };
  return { app: port("app"), chain: port("chain"), facilitator: port("facilitator"), upstream: port("upstream") };
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
    else child.once("exit", (code) => resolve(code));
  });

afterEach(async () => {
  for (const entry of started.splice(0)) {
    entry.child.kill("SIGKILL");
    await exited(entry.child);
  }
  // The launcher's children (anvil writing its state as it stops) may still write into the folder for a moment,
  // several seconds on a loaded machine.
  for (const dir of dataDirs.splice(0)) rmSync(dir, { recursive: true, force: true, maxRetries: 100, retryDelay: 100 });
});

describe("paysvc dev (npm start)", () => {
  it("prints one line per service, the pay-to and a funded payer key, then ready; SIGTERM stops everything", async () => {
    const stack = await startCli();
    expect(await eventually(async () => stack.output().includes("ready"), 90_000), stack.output()).toBe(true);
    const out = stack.output();
    const ports = Object.values(printedPorts(out));
    expect(new Set(ports).size).toBe(4);
    expect(out).toMatch(/^upstream\s+http:\/\/127\.0\.0\.1:\d+\/v1/m);
    expect(out).toMatch(/pay-to\s+0x70997970C51812dc3A010C7d01b50e0d17dc79C8/);
    expect(out).toMatch(/payer\s+0x[0-9a-fA-F]{40}\s+private key 0x[0-9a-f]{64}/);
    for (const port of ports) expect(await listening(port), `port ${port}`).toBe(true);

    stack.child.kill("SIGTERM");
    expect(await exited(stack.child)).toBe(0);
    for (const port of ports) expect(await eventually(async () => !(await listening(port))), `port ${port}`).toBe(true);
  });

  it("leaves no orphan listening when the launcher itself is killed with SIGKILL", async () => {
    const stack = await startCli();
    expect(await eventually(async () => stack.output().includes("ready"), 90_000), stack.output()).toBe(true);
    const ports = Object.values(printedPorts(stack.output()));
    stack.child.kill("SIGKILL");
    await exited(stack.child);
    for (const port of ports) expect(await eventually(async () => !(await listening(port))), `port ${port}`).toBe(true);
  });

  it("stops everything and exits non-zero when the app crashes", async () => {
    const stack = await startCli();
    expect(await eventually(async () => stack.output().includes("ready"), 90_000), stack.output()).toBe(true);
    // Kill whatever serves the app port: find it through /proc, as the launcher does not expose the pid.
    const ports = printedPorts(stack.output());
    const appPid = pidListeningOn(ports.app);
    expect(appPid).toBeDefined();
    process.kill(appPid!, "SIGKILL");
    expect(await exited(stack.child)).toBe(1);
    expect(stack.output()).toMatch(/exited unexpectedly/);
    for (const port of Object.values(ports))
      expect(await eventually(async () => !(await listening(port))), `port ${port}`).toBe(true);
  });

  it("keeps the chain across a restart: a payment settled before it is still on chain, as the ledger says", async () => {
    const dataDir = newDataDir();
    const first = await startCli({}, dataDir);
    expect(await eventually(async () => first.output().includes("ready"), 90_000), first.output()).toBe(true);
    const payerKey = /private key (0x[0-9a-f]{64})/.exec(first.output())![1] as `0x${string}`;
    const client = new x402Client();
    registerExactEvmScheme(client, { signer: toClientEvmSigner(privateKeyToAccount(payerKey)) });
    const paid = await wrapFetchWithPayment(fetch, client)(
      `http://127.0.0.1:${printedPorts(first.output()).app}/v1/chat/completions`,
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          model: "vendor-a/gpt-6-luna",
          messages: [{ role: "user", content: "restart" }],
          max_tokens: 8,
        }),
      },
    );
    expect(paid.status).toBe(200);
    const { transaction } = decodePaymentResponseHeader(paid.headers.get("payment-response")!);
    await paid.text();
    const payToBalance = () => usdcBalanceAt(printedPorts(first.output()).chain, PAY_TO);
    const before = await payToBalance();
    first.child.kill("SIGINT");
    expect(await exited(first.child)).toBe(0);

    const second = await startCli({}, dataDir);
    expect(await eventually(async () => second.output().includes("ready"), 90_000), second.output()).toBe(true);
    const chainPort = printedPorts(second.output()).chain;
    const chain = createPublicClient({ transport: http(`http://127.0.0.1:${chainPort}`) });
    expect((await chain.getTransactionReceipt({ hash: transaction as `0x${string}` })).status).toBe("success");
    expect(await usdcBalanceAt(chainPort, PAY_TO)).toBe(before);
    const ledger = new Database(join(dataDir, "paysvc.sqlite"), { readonly: true });
    try {
      const row = ledger.prepare('select status from payments where "transaction" = ?').get(transaction);
      expect(row).toEqual({ status: "settled" });
    } finally {
      ledger.close();
    }
  });

  it("says which saved chain state it cannot load, and how to start afresh", async () => {
    const dataDir = newDataDir();
    mkdirSync(join(dataDir, "chain"));
    writeFileSync(join(dataDir, "chain", "eip155-137.json"), "not a saved chain");
    const stack = await startCli({}, dataDir);
    expect(await exited(stack.child)).toBe(1);
    expect(stack.output()).toContain(`its saved state ${join(dataDir, "chain", "eip155-137.json")} cannot be loaded`);
  });

  it("refuses invalid configuration with a message that names the variable and how to fix it", async () => {
    const stack = await startCli({ PAY_TO: "0x1234", NETWORK: "eip155:1" });
    expect(await exited(stack.child)).toBe(2);
    expect(stack.output()).toMatch(/Invalid configuration/);
    expect(stack.output()).toMatch(/NETWORK: must be one of eip155:137, eip155:8453/);
    expect(stack.output()).toMatch(/PAY_TO: must be an EVM address/);
  });
});

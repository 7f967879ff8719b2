import { spawnSync } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, describe, expect, it } from "vitest";

const bin = fileURLToPath(new URL("../bin.mjs", import.meta.url));
const directory = realpathSync(mkdtempSync(join(tmpdir(), "paysvc-reconcile-")));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

/** An empty ledger of the operator's: reconciling it reads no row, so no chain or facilitator is asked anything. */
const DATABASE_URL = `file:${join(directory, "ledger.sqlite")}`;
/** Nothing listens there: what is started for the run must not need the chain to be up. */
const UNREACHABLE_RPC = "http://127.0.0.1:9";

/** `paysvc <args>` with only these variables set (and what running node needs), as an operator's shell would. */
function paysvc(args: string[], env: Record<string, string>) {
  const inherited = Object.fromEntries(
    ["PATH", "HOME", "TMPDIR"].flatMap((name) => (process.env[name] ? [[name, process.env[name]!]] : [])),
  );
  const run = spawnSync(process.execPath, [bin, ...args], {
    encoding: "utf8",
    timeout: 60_000,
    env: { ...inherited, ...env } as NodeJS.ProcessEnv,
  });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

// Each run loads the whole CLI through tsx, a few seconds.
describe("paysvc ledger reconcile's facilitator", { timeout: 120_000 }, () => {
  it("uses the embedded stack of `npm start` at its local URLs when no chain or facilitator is set", () => {
    const run = paysvc(["ledger", "reconcile", "--json"], { DATABASE_URL });
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ network: "eip155:137", checked: 0 });
    expect(run.stderr).toContain(
      "none of CHAIN_RPC_URL, FACILITATOR_URL and FACILITATORS is set: the embedded stack of `npm start`, chain http://127.0.0.1:8545, facilitator http://127.0.0.1:4020",
    );
  });

  it("checks without a facilitator, and refuses to settle without one (exit 2)", () => {
    const checked = paysvc(["ledger", "reconcile", "--check", "--json"], {
      DATABASE_URL,
      CHAIN_RPC_URL: UNREACHABLE_RPC,
    });
    expect(checked.code, checked.stderr).toBe(0);
    expect(JSON.parse(checked.stdout)).toMatchObject({ check: true, checked: 0 });

    const refused = paysvc(["ledger", "reconcile"], { DATABASE_URL, CHAIN_RPC_URL: UNREACHABLE_RPC });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/FACILITATOR_URL: required with CHAIN_RPC_URL.*or FACILITATOR_PRIVATE_KEY/);
  });

  it("starts paysvc start's built-in facilitator for CHAIN_RPC_URL + FACILITATOR_PRIVATE_KEY", () => {
    const key = generatePrivateKey();
    const run = paysvc(["ledger", "reconcile", "--json"], {
      DATABASE_URL,
      CHAIN_RPC_URL: UNREACHABLE_RPC,
      FACILITATOR_PRIVATE_KEY: key,
      // The built-in facilitator settles only payments to the deployment's pay-to.
      PAY_TO: privateKeyToAccount(generatePrivateKey()).address,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ check: false, checked: 0 });
    expect(run.stderr).toMatch(
      new RegExp(
        `built-in facilitator http://127\\.0\\.0\\.1:\\d+ on ${UNREACHABLE_RPC}, settling from ${privateKeyToAccount(key).address}`,
      ),
    );
  });

  it("says in --help what it settles through", () => {
    const help = paysvc(["ledger", "reconcile", "--help"], {});
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/CHAIN_RPC_URL \+ FACILITATOR_PRIVATE_KEY start the built-in facilitator/);
    expect(help.stdout).toMatch(/chain http:\/\/127\.0\.0\.1:8545 and facilitator http:\/\/127\.0\.0\.1:4020/);
    expect(help.stdout).toMatch(/--check settles nothing and needs no facilitator/);
  });
});

import { execFile } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PUBLIC_DEVELOPMENT_ADDRESSES } from "../../config/public-dev-accounts";
import { getNetwork } from "../../networks";
import { facilitatorAccess, startFacilitatorServer } from "../lib/facilitator-server";

const root = fileURLToPath(new URL("../..", import.meta.url));
/**
 * A copy of the package without its production build: cli/ copied (the build's paths are found from its files'
 * own location), everything else linked to this checkout, and neither dist/ nor .next/.
 */
const unbuilt = realpathSync(mkdtempSync(join(tmpdir(), "paysvc-unbuilt-")));
afterAll(() => rmSync(unbuilt, { recursive: true, force: true }));
for (const entry of readdirSync(root)) {
  if (["cli", "dist", ".next", ".git", "data", "test-results"].includes(entry)) continue;
  symlinkSync(join(root, entry), join(unbuilt, entry));
}
cpSync(join(root, "cli"), join(unbuilt, "cli"), { recursive: true });

/**
 * The facilitator --check asks /supported: the built-in one (its /supported needs no chain), serving exact and
 * upto on eip155:137.
 */
let facilitator: Awaited<ReturnType<typeof startFacilitatorServer>>;
beforeAll(async () => {
  const access = facilitatorAccess(production.PAY_TO);
  facilitator = await startFacilitatorServer({
    network: getNetwork("eip155:137"),
    rpcUrl: "http://127.0.0.1:9",
    privateKey: generatePrivateKey(),
    port: 0,
    embeddedChain: true,
    access,
  });
  production.FACILITATOR_URL = facilitator.url;
  production.FACILITATOR_AUTH_HEADER = access.header;
});
afterAll(() => facilitator?.stop());

/** An operator's complete production configuration; --check reaches only its facilitator. */
const production = {
  NETWORK: "eip155:137",
  PAY_TO: privateKeyToAccount(generatePrivateKey()).address,
  FACILITATOR_URL: "",
  FACILITATOR_AUTH_HEADER: "",
  UPSTREAM_BASE_URL: "https://api.example/v1",
  DATABASE_URL: `file:${join(unbuilt, "paysvc.sqlite")}`,
};

/** The CLI run to its end, without blocking this process (whose facilitator it may ask). */
function paysvc(packageRoot: string, args: string[], env: Record<string, string> = {}, cwd?: string) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [join(packageRoot, "cli", "bin.mjs"), ...args],
      { cwd, encoding: "utf8", timeout: 60_000, env: { ...process.env, ...env } },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : null) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

describe("paysvc start --check", { timeout: 120_000 }, () => {
  it("refuses a package without its production build, as start does, and passes once it is there", async () => {
    const checked = await paysvc(unbuilt, ["start", "--check"], production);
    expect(checked.stderr).toBe("paysvc start: no production build: run `npm run build` first\n");
    expect(checked.code).toBe(2);
    expect(checked.stdout).toBe("");

    // The compiled CLI is already in dist/: bin.mjs made it for the command above.
    mkdirSync(join(unbuilt, "dist"), { recursive: true });
    writeFileSync(join(unbuilt, "dist", "server.mjs"), "");
    mkdirSync(join(unbuilt, ".next"));
    writeFileSync(join(unbuilt, ".next", "BUILD_ID"), "test");
    const built = await paysvc(unbuilt, ["start", "--check", "--json"], production);
    expect(built.code, built.stderr).toBe(0);
    expect(JSON.parse(built.stdout)).toMatchObject({ payTo: production.PAY_TO });
  });

  it("reads relative PAYSVC_CATALOG and DATABASE_URL where it is run, and reports them as absolute paths", async () => {
    mkdirSync(join(unbuilt, "dist"), { recursive: true });
    writeFileSync(join(unbuilt, "dist", "server.mjs"), "");
    mkdirSync(join(unbuilt, ".next"), { recursive: true });
    writeFileSync(join(unbuilt, ".next", "BUILD_ID"), "test");
    const operator = realpathSync(mkdtempSync(join(tmpdir(), "paysvc-operator-")));
    try {
      writeFileSync(
        join(operator, "catalog.json"),
        JSON.stringify({
          extends: "default",
          models: [
            {
              id: "acme/tiny-1",
              kind: "chat",
              prices: { input_per_1m: "0.05", output_per_1m: "0.2" },
              routes: [{ provider: "acme", base_url: "https://llm.acme.example/v1", model: "tiny" }],
            },
          ],
        }),
      );
      const env = { ...production, PAYSVC_CATALOG: "catalog.json", DATABASE_URL: "file:./paysvc.sqlite" };
      const checked = await paysvc(unbuilt, ["start", "--check", "--json"], env, operator);
      expect(checked.code, checked.stderr).toBe(0);
      expect(JSON.parse(checked.stdout)).toMatchObject({
        catalog: join(operator, "catalog.json"),
        database: `file:${join(operator, "paysvc.sqlite")}`,
      });
      const text = await paysvc(unbuilt, ["start", "--check"], env, operator);
      expect(text.stdout).toContain(`catalog     ${join(operator, "catalog.json")}`);

      const missing = await paysvc(unbuilt, ["start", "--check"], { ...env, PAYSVC_CATALOG: "other.json" }, operator);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain(
        `paysvc start: PAYSVC_CATALOG: cannot read ${join(operator, "other.json")} (ENOENT)`,
      );
    } finally {
      rmSync(operator, { recursive: true, force: true });
    }
  });

  it("documents its exit codes in --help", async () => {
    const help = await paysvc(root, ["start", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/--check\s+validate the whole configuration[^-]*production build/);
    expect(help.stdout).toMatch(
      /Exit codes: 2 when something is missing or wrong [^\n]*with --check, 0 when\s+it would start/,
    );
  });
});

describe("paysvc config generate --help", { timeout: 120_000 }, () => {
  it("shows a placeholder pay-to, never a public development account", async () => {
    const help = await paysvc(root, ["config", "generate", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("--pay-to 0xYourAddress");
    for (const address of PUBLIC_DEVELOPMENT_ADDRESSES)
      expect(help.stdout.toLowerCase()).not.toContain(address.toLowerCase());
  });
});

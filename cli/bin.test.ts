import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const bin = join(dirname(fileURLToPath(import.meta.url)), "bin.mjs");
// realpath: the CLI reports the paths it wrote, and macOS's tmpdir is a symlink.
const userDirectory = realpathSync(mkdtempSync(join(tmpdir(), "paysvc-cwd-")));
afterAll(() => rmSync(userDirectory, { recursive: true, force: true }));

/** Runs the installed `paysvc` entry point from the user's directory, as a shell would. */
function paysvc(...args: string[]) {
  return paysvcWith({}, ...args);
}

/** The same, with these variables set in its environment. */
function paysvcWith(env: Record<string, string>, ...args: string[]) {
  const run = spawnSync(process.execPath, [bin, ...args], {
    cwd: userDirectory,
    encoding: "utf8",
    timeout: 60_000,
    env: { ...process.env, ...env },
  });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

const generate = (...more: string[]) =>
  paysvc(
    "config",
    "generate",
    "--network",
    "eip155:8453",
    "--origin",
    "http://127.0.0.1:9",
    "--pay-to",
    "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
    "--json",
    ...more,
  );

// Each run loads the whole CLI, a second or two.
describe("paysvc run from another directory", { timeout: 120_000 }, () => {
  it("writes and reads the default deployments folder, and --out, where the command is run", () => {
    const generated = generate();
    expect(generated.code, generated.stderr).toBe(0);
    expect(JSON.parse(generated.stdout).files).toEqual([
      join(userDirectory, "deployments", "eip155-8453.json"),
      join(userDirectory, "deployments", "eip155-8453.env"),
    ]);
    expect(readFileSync(join(userDirectory, "deployments", "eip155-8453.env"), "utf8")).toContain(
      "NETWORK=eip155:8453",
    );

    const built = paysvc("discovery", "build", "--all", "--out", "site");
    expect(built.code, built.stderr).toBe(0);
    expect(existsSync(join(userDirectory, "site", "eip155-8453", "llms.txt"))).toBe(true);

    // The configured origin is unreachable: health fails, but only after finding it in ./deployments.
    const health = paysvc("health", "--all", "--timeout", "2000", "--json");
    expect(health.code, health.stderr).toBe(1);
    expect(JSON.parse(health.stdout)[0]).toMatchObject({ origin: "http://127.0.0.1:9", ok: false });
  });

  it("resolves relative --out, --config-dir and --body against the current directory", () => {
    const generated = generate("--out", "configs/base");
    expect(generated.code, generated.stderr).toBe(0);
    expect(existsSync(join(userDirectory, "configs", "base", "eip155-8453.json"))).toBe(true);

    const built = paysvc(
      "discovery",
      "build",
      "--network",
      "eip155:8453",
      "--config-dir",
      "configs/base",
      "--out",
      "public",
    );
    expect(built.code, built.stderr).toBe(0);
    expect(existsSync(join(userDirectory, "public", "eip155-8453", "openapi.json"))).toBe(true);

    const empty = paysvc("health", "--all", "--config-dir", "nowhere");
    expect(empty.stderr).toMatch(/nothing to check/);

    mkdirSync(join(userDirectory, "requests"), { recursive: true });
    writeFileSync(
      join(userDirectory, "requests", "chat.json"),
      JSON.stringify({ model: "vendor-a/gpt-6-luna", messages: [{ role: "user", content: "hi" }], max_tokens: 10 }),
    );
    const quoted = paysvc("quote", "/v1/chat/completions", "--body", "requests/chat.json", "--json");
    expect(quoted.code, quoted.stderr).toBe(0);
    expect(JSON.parse(quoted.stdout)).toMatchObject({ endpoint: "/v1/chat/completions", network: "eip155:137" });
  });
});

describe("paths in the environment, run from another directory", { timeout: 120_000 }, () => {
  const route = { provider: "acme", base_url: "https://llm.acme.example/v1", model: "m" };
  const chat = { id: "acme/tiny-1", kind: "chat", prices: { input_per_1m: "0.05", output_per_1m: "0.2" } };

  it("reads a relative PAYSVC_CATALOG where the command is run, and names the absolute path when it is missing", () => {
    mkdirSync(join(userDirectory, "site"), { recursive: true });
    writeFileSync(
      join(userDirectory, "site", "catalog.json"),
      JSON.stringify({ extends: "default", models: [{ ...chat, routes: [route] }] }),
    );
    writeFileSync(
      join(userDirectory, "site", "tiny.json"),
      JSON.stringify({ model: "acme/tiny-1", messages: [{ role: "user", content: "hi" }], max_tokens: 10 }),
    );
    const quoted = paysvcWith(
      { PAYSVC_CATALOG: "site/catalog.json" },
      "quote",
      "/v1/chat/completions",
      "--body",
      "site/tiny.json",
      "--json",
    );
    expect(quoted.code, quoted.stderr).toBe(0);
    expect(JSON.parse(quoted.stdout)).toMatchObject({ endpoint: "/v1/chat/completions" });

    const missing = paysvcWith({ PAYSVC_CATALOG: "site/missing.json" }, "quote", "/v1/chat/completions");
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain(
      `PAYSVC_CATALOG: cannot read ${join(userDirectory, "site", "missing.json")} (ENOENT)`,
    );
  });

  it("keeps a relative SQLite DATABASE_URL where the command is run, not in the package folder", () => {
    const report = paysvcWith({ DATABASE_URL: "file:./ledgers/paysvc.sqlite" }, "ledger", "report", "--json");
    expect(report.code, report.stderr).toBe(0);
    expect(existsSync(join(userDirectory, "ledgers", "paysvc.sqlite"))).toBe(true);
    expect(existsSync(join(dirname(bin), "..", "ledgers"))).toBe(false);
  });
});

import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, describe, expect, it } from "vitest";
import { quote, stack } from "./support/payments";
import { FREE_PORTS } from "./support/free-ports";
import { paysvc } from "./support/run-paysvc";

const workDir = mkdtempSync(join(tmpdir(), "paysvc-cli-"));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

const served = async (path: string) => {
  const response = await fetch(`${stack().appUrl}${path}`);
  return { status: response.status, type: response.headers.get("content-type"), body: await response.text() };
};

describe("discovery documents", () => {
  it("serves an OpenAPI 3.1 document, version 1.0.0, that a validator accepts and that covers every endpoint", async () => {
    const document = await served("/openapi.json");
    expect(document.status).toBe(200);
    const openapi = JSON.parse(document.body);
    const validator = new Validator();
    const result = await validator.validate(openapi);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(openapi.openapi).toBe("3.1.0");
    expect(openapi.info.version).toBe("1.0.0");
    for (const path of [
      "/v1/chat/completions",
      "/api/v1/chat/completions",
      "/v1/responses",
      "/api/v1/responses",
      "/api/v1/images/generations",
      "/api/v1/images/image2image",
      "/jev",
      "/prepaid/codes",
      "/prepaid/codes/auto",
      "/v1/embeddings",
      "/v1/free/chat/completions",
      "/v1/free/chat/completions/quota",
      "/v1/models",
      "/.well-known/x402",
      "/health",
      "/v1/prepaid/status",
    ]) {
      expect(openapi.paths[path], path).toBeDefined();
    }
    const chat = openapi.paths["/v1/chat/completions"].post;
    expect(chat.responses["402"].headers["PAYMENT-REQUIRED"]).toBeDefined();
    expect(chat["x-payment-info"]).toMatchObject({
      network: "eip155:137",
      asset: "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359",
      payTo: stack().payTo,
    });
    expect(chat.requestBody.content["application/json"].schema.properties.messages).toBeDefined();
  });

  it("serves the x402 manifest with absolute resources and version 2 items", async () => {
    const manifest = JSON.parse((await served("/.well-known/x402")).body);
    expect(manifest.version).toBe(1);
    expect(manifest.resources).toContain(`${stack().appUrl}/v1/chat/completions`);
    expect(manifest.resources.every((url: string) => url.startsWith(stack().appUrl))).toBe(true);
    expect(typeof manifest.instructions).toBe("string");
    expect(manifest.x402Version).toBe(2);
    expect(manifest.items[0].accepts[0]).toMatchObject({
      scheme: "exact",
      network: "eip155:137",
      payTo: stack().payTo,
    });
    expect(manifest.items[0].input.bodySchema).toBeDefined();
  });

  it("lets shared caches keep them per Host, which names the origin when PUBLIC_BASE_URL is not set", async () => {
    for (const path of ["/openapi.json", "/.well-known/x402", "/llms.txt", "/AI-AGENTS.md"]) {
      const response = await fetch(`${stack().appUrl}${path}`);
      expect(response.headers.get("cache-control"), path).toBe("public, max-age=300");
      expect(response.headers.get("vary"), path).toBe("Host");
      expect(await response.text(), path).toContain(new URL(stack().appUrl).host);
    }
  });

  it("serves llms.txt as text/plain in the llmstxt.org structure and AI-AGENTS.md as markdown", async () => {
    const llms = await served("/llms.txt");
    expect(llms.type).toMatch(/^text\/plain/);
    const lines = llms.body.split("\n");
    expect(lines[0]).toMatch(/^# \S/);
    expect(lines.find((line) => line.startsWith("> "))).toBeDefined();
    expect(llms.body).toMatch(/^## Docs$/m);
    expect(llms.body).toMatch(/^- \[[^\]]+\]\(http[^)]+\): .+$/m);
    const agents = await served("/AI-AGENTS.md");
    expect(agents.type).toMatch(/^text\/markdown/);
    expect(agents.body).toContain("wrapFetchWithPayment");
    expect(agents.body).toContain("setSpendControls");
    expect(agents.body).toContain("402");
  });
});

describe("paysvc CLI", () => {
  const configDir = join(workDir, "deployments");

  it("lists networks, as a table and as JSON", async () => {
    const text = await paysvc(["networks"]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain("eip155:8453");
    const json = await paysvc(["networks", "--json"]);
    expect(JSON.parse(json.stdout).map((network: { id: string }) => network.id)).toContain("eip155:5042");
  });

  it("generates a validated configuration and refuses a bad checksum with one clear line", async () => {
    const generate = (network: string, payTo: string, ...more: string[]) =>
      paysvc([
        "config",
        "generate",
        "--network",
        network,
        "--origin",
        stack().appUrl,
        "--pay-to",
        payTo,
        "--out",
        configDir,
        ...more,
      ]);
    const bad = await generate("eip155:137", "0x70997970c51812dc3a010c7d01b50e0d17dc79C8");
    expect(bad.code).not.toBe(0);
    expect(bad.stderr.trim().split("\n")).toHaveLength(1);
    expect(bad.stderr).toMatch(/payTo: must be an EVM address on eip155:137: .*valid EIP-55 checksum/);
    const evmPayToOnSolana = await generate("solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", stack().payTo);
    expect(evmPayToOnSolana.code).not.toBe(0);
    expect(evmPayToOnSolana.stderr).toMatch(
      /payTo: must be a Solana address on solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp/,
    );
    const unknown = await generate("eip155:1", stack().payTo);
    expect(unknown.stderr).toMatch(/network: must be one of/);
    // The shared stack's deployment offers channels, as `paysvc dev` runs it.
    const good = await generate("eip155:137", stack().payTo, "--channels", "--json");
    expect(good.code).toBe(0);
    expect(JSON.parse(good.stdout).files).toHaveLength(2);
    expect(readFileSync(join(configDir, "eip155-137.env"), "utf8")).toContain(`PAY_TO=${stack().payTo}`);
  });

  it("builds discovery documents byte-identical to what the deployment serves", async () => {
    const out = join(workDir, "discovery");
    const built = await paysvc(["discovery", "build", "--all", "--config-dir", configDir, "--out", out]);
    expect(built.code, built.stderr).toBe(0);
    for (const name of ["openapi.json", ".well-known/x402", "llms.txt", "AI-AGENTS.md"]) {
      expect(readFileSync(join(out, "eip155-137", name), "utf8"), name).toBe((await served(`/${name}`)).body);
    }
  });

  it("quotes offline exactly what the service quotes", async () => {
    const body = {
      model: "vendor-a/gpt-5.6-sol",
      messages: [{ role: "user", content: "price check" }],
      max_tokens: 1000,
    };
    const file = join(workDir, "body.json");
    writeFileSync(file, JSON.stringify(body));
    const offline = await paysvc(["quote", "/v1/chat/completions", "--body", file, "--json"]);
    expect(offline.code, offline.stderr).toBe(0);
    expect(JSON.parse(offline.stdout).amount).toBe((await quote("/v1/chat/completions", body)).accepts[0]!.amount);
    const invalid = await paysvc(["quote", "/prepaid/codes", "--body", file]);
    expect(invalid.code).not.toBe(0);
    expect(invalid.stderr).toMatch(/would answer 400/);
  });

  it("passes health for a configured deployment, and says what differs when the pay-to or the origin is wrong", async () => {
    const healthy = await paysvc(["health", "--all", "--config-dir", configDir, "--json"]);
    expect(healthy.code, healthy.stdout + healthy.stderr).toBe(0);
    expect(JSON.parse(healthy.stdout)[0]).toMatchObject({ origin: stack().appUrl, ok: true });

    const otherDir = join(workDir, "other-pay-to");
    await paysvc([
      "config",
      "generate",
      "--network",
      "eip155:137",
      "--origin",
      stack().appUrl,
      "--pay-to",
      "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
      "--out",
      otherDir,
    ]);
    const wrongPayTo = await paysvc(["health", "--all", "--config-dir", otherDir]);
    expect(wrongPayTo.code).toBe(1);
    expect(wrongPayTo.stdout).toMatch(
      /payTo is 0x70997970C51812dc3A010C7d01b50e0d17dc79C8, expected 0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC/,
    );

    const down = await paysvc([
      "health",
      "--origin",
      stack().appUrl,
      "http://127.0.0.1:9",
      "--config-dir",
      configDir,
      "--timeout",
      "2000",
    ]);
    expect(down.code).toBe(1);
    expect(down.stdout).toMatch(/http:\/\/127\.0\.0\.1:9\s+health\s+FAIL\s+unreachable/);
    expect(down.stderr).toMatch(/\[2\/2\]/);
  });

  /** `paysvc dev <args>` until it prints `ready`; its output so far, and how to stop it. */
  async function startDev(args: string[], env: Record<string, string>, ready: string) {
    const child = spawn(process.execPath, ["cli/bin.mjs", "dev", ...args], {
      env: { ...process.env, ...FREE_PORTS, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const stop = async () => {
      child.kill("SIGTERM");
      if (child.exitCode === null) await new Promise((resolve) => child.once("exit", resolve));
    };
    const deadline = Date.now() + 120_000;
    while (!output.includes(ready) && Date.now() < deadline && child.exitCode === null) {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    if (!output.includes(ready)) await stop();
    expect(output).toContain(ready);
    return { output, stop };
  }

  it("runs two networks with `paysvc dev`, and health passes for both", async () => {
    const dev = await startDev(
      ["--networks", "eip155:137,eip155:8453"],
      { DATA_DIR: join(workDir, "dev-data") },
      "all 2 deployments ready",
    );
    try {
      const origins = [...dev.output.matchAll(/^\[(eip155:\d+)\] app\s+(http:\/\/\S+)/gm)].map((match) => match[2]!);
      expect(origins).toHaveLength(2);
      const health = await paysvc(["health", "--origin", ...origins, "--config-dir", join(workDir, "none"), "--json"]);
      expect(health.code, health.stdout).toBe(0);
      expect(JSON.parse(health.stdout).map((result: { ok: boolean }) => result.ok)).toEqual([true, true]);
    } finally {
      await dev.stop();
    }
  });

  it("runs two networks on an embedded PostgreSQL with `--database postgres --instances 2`", async () => {
    // The embedded server runs as an unprivileged user when we are root: it must reach its data directory.
    chmodSync(workDir, 0o755);
    const dev = await startDev(
      ["--networks", "eip155:137,eip155:8453", "--database", "postgres", "--instances", "2"],
      { DATA_DIR: join(workDir, "postgres-dev") },
      "all 2 deployments ready",
    );
    try {
      expect(dev.output).toMatch(/^postgres\s+postgres:\/\/paysvc:\*\*\*@127\.0\.0\.1:\d+\/<network>/m);
      const instances = [
        ...dev.output.matchAll(/^\[(eip155:\d+)\] app\s+(http:\/\/\S+)\s+\(network \S+, instance (\d) of 2\)/gm),
      ];
      expect(instances.map((match) => `${match[1]} ${match[3]}`)).toEqual([
        "eip155:137 1",
        "eip155:137 2",
        "eip155:8453 1",
        "eip155:8453 2",
      ]);
      const [polygon1, polygon2, base1] = instances.map((match) => match[2]!);
      for (const origin of [polygon1, polygon2, base1]) {
        const health = await (await fetch(`${origin}/health`)).json();
        expect(health.checks.database).toMatchObject({ engine: "postgresql", status: "up" });
      }
      // A network's instances share its database; the other network has a database of its own.
      const free = await fetch(`${polygon1}/v1/free/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ messages: [{ role: "user", content: "counted once, seen by both" }] }),
      });
      expect(free.status).toBe(200);
      await free.text();
      const used = async (origin: string | undefined) =>
        (await (await fetch(`${origin}/v1/free/chat/completions/quota`)).json()).per10Min.used;
      expect(await used(polygon2)).toBe(1);
      expect(await used(base1)).toBe(0);
    } finally {
      await dev.stop();
    }
  });
});

describe("402 challenges", () => {
  it("carry the official bazaar discovery extension with the input schema", async () => {
    const { validateDiscoveryExtension } = await import("@x402/extensions/bazaar");
    const required = await quote("/v1/chat/completions", {
      model: "vendor-a/gpt-6-luna",
      messages: [{ role: "user", content: "x" }],
    });
    const bazaar = required.extensions?.bazaar as Parameters<typeof validateDiscoveryExtension>[0];
    expect(validateDiscoveryExtension(bazaar)).toMatchObject({ valid: true });
    expect(JSON.stringify(bazaar)).toContain("messages");
  });
});

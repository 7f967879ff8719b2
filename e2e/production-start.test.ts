import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestClient, http, parseEther } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../cli/dev-stack/next-app";
import { startLocalUpstream, type LocalUpstream } from "../cli/dev-stack/local-upstream";
import { chatBody, payingOpenAI, quote, stack, usdcBalance } from "./support/payments";
import { paysvc } from "./support/run-paysvc";
import { startService, stopService } from "./support/paysvc-service";
import Database from "better-sqlite3";
import { cdpApiKey, cdpTokenProblem } from "./support/cdp-keys";
import { startFacilitatorFront } from "./support/facilitator-front";
import { startFacilitatorProxy } from "./support/facilitator-proxy";
import { startOwnFacilitator } from "./support/own-facilitator";

const directory = mkdtempSync(join(tmpdir(), "paysvc-production-"));
// An operator's own address: these payments are not the shared ledger's, whose sum the last e2e file checks against
// what the shared pay-to received.
const PAY_TO = privateKeyToAccount(generatePrivateKey()).address;
let provider: LocalUpstream;
/**
 * The operator's facilitator, standing for a real one: the stack's serves only the stack's pay-to. It settles on
 * the shared chain from an account of its own, for PAY_TO.
 */
let facilitator: Awaited<ReturnType<typeof startOwnFacilitator>>;
let count = 0;

/**
 * An operator's complete configuration: the test's own pieces standing for real ones (the shared stack's chain and
 * facilitator, a development provider started here as a provider would run, without fault directives), a database
 * of its own, and a port nothing listens on yet.
 */
async function operatorEnvironment(): Promise<Record<string, string>> {
  return {
    NETWORK: "eip155:137",
    PAY_TO,
    FACILITATOR_URL: facilitator.url,
    FACILITATOR_AUTH_HEADER: facilitator.authHeader,
    UPSTREAM_BASE_URL: `${provider.url}/v1`,
    DATABASE_URL: `file:${join(directory, `production-${++count}.sqlite`)}`,
    PORT: String(await freePort()),
    HOST: "127.0.0.1",
    RECONCILE_INTERVAL_SECONDS: "0",
  };
}

const listening = (port: string) =>
  new Promise<boolean>((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port: Number(port) });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });

/** App servers running on the port: a started child would be one. */
const appServersOn = (port: string) => {
  try {
    return execFileSync("pgrep", ["-f", `app/serve.mjs --port ${port} `], { encoding: "utf8" }).trim();
  } catch {
    return "";
  }
};

beforeAll(async () => {
  provider = await startLocalUpstream({ port: 0 });
  facilitator = await startOwnFacilitator(PAY_TO);
});

afterAll(async () => {
  await facilitator?.stop();
  await provider.stop();
  rmSync(directory, { recursive: true, force: true });
});

describe("paysvc start (production)", () => {
  it("refuses each missing piece in one line naming what to set, exit 2, with nothing started", async () => {
    const pieces: [Record<string, string>, RegExp][] = [
      [{ PAY_TO: "" }, /^paysvc start: PAY_TO: required: the address that receives payments$/],
      [
        { FACILITATOR_URL: "" },
        /^paysvc start: FACILITATOR_URL: required: the x402 facilitator .*CHAIN_RPC_URL and FACILITATOR_PRIVATE_KEY/,
      ],
      [
        { UPSTREAM_BASE_URL: "" },
        /^paysvc start: UPSTREAM_BASE_URL: required: no provider serves vendor-a\/gpt-5\.6-sol, .*; set/,
      ],
      [{ DATABASE_URL: "" }, /^paysvc start: DATABASE_URL: required: where payments and prepaid keys are kept/],
      [
        { FACILITATOR_URL: "", CHAIN_RPC_URL: stack().chainRpcUrl },
        /^paysvc start: FACILITATOR_PRIVATE_KEY: required with CHAIN_RPC_URL when FACILITATOR_URL is not set/,
      ],
    ];
    for (const [missing, line] of pieces) {
      const env = { ...(await operatorEnvironment()), ...missing };
      const { code, stdout, stderr } = await paysvc(["start"], 30_000, env);
      const lines = stderr.trim().split("\n");
      expect(code, JSON.stringify(missing)).toBe(2);
      expect(lines, stderr).toHaveLength(1);
      expect(lines[0]).toMatch(line);
      expect(stdout).toBe("");
      expect(await listening(env.PORT!)).toBe(false);
      expect(appServersOn(env.PORT!)).toBe("");
    }
  });

  it("validates the whole configuration with --check and exits, serving nothing", async () => {
    const env = await operatorEnvironment();
    const checked = await paysvc(["start", "--check", "--json"], 30_000, env);
    expect(checked.code, checked.stderr).toBe(0);
    const report = JSON.parse(checked.stdout) as { providers: { provider: string }[]; models: { id: string }[] };
    // Printed as scheme, host and port: a path or query may embed a key.
    expect(report.providers).toEqual([{ provider: "upstream", baseUrl: `${provider.url}/…` }]);
    expect(report.models).toHaveLength(4 + 7 + 3);
    expect(await listening(env.PORT!)).toBe(false);

    const catalog = join(directory, "bad-catalog.json");
    writeFileSync(catalog, JSON.stringify({ extends: "default", models: [{ id: "x", kind: "chat" }] }));
    const refused = await paysvc(["start", "--check"], 30_000, { ...env, PAYSVC_CATALOG: catalog });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(new RegExp(`^paysvc start: ${catalog}: models\\[0\\]\\.routes: `, "m"));
    expect(refused.stderr).toMatch(new RegExp(`^paysvc start: ${catalog}: models\\[0\\]\\.prices: `, "m"));
  });

  it("serves a paid call with the operator's pieces, charged exactly the quote, and no fault directive reaches its provider", async () => {
    const env = await operatorEnvironment();
    const service = await startService(env);
    try {
      expect(service.log.join("")).not.toMatch(/chain|anvil|local development provider/);
      const payer = stack().payers[3]!;
      // A directive is text to a provider the development stack did not start: answered, and paid for.
      const body = chatBody("[paysvc-dev-fault:http-error] hello from production");
      const quoted = BigInt((await quote("/v1/chat/completions", body, service.url)).accepts[0]!.amount);
      const before = { payer: await usdcBalance(payer.address), payTo: await usdcBalance(PAY_TO) };
      const { data, response } = await payingOpenAI(payer.privateKey, `${service.url}/v1`)
        .chat.completions.create(body as never)
        .withResponse();
      expect(response.headers.get("x-paysvc-provider")).toBe("upstream");
      expect(data.model).toBe("vendor-a/gpt-6-luna");
      expect(data.choices[0]?.message.content).toMatch(/^Local development reply to "\[paysvc-dev-fault:http-error\]/);
      const after = { payer: await usdcBalance(payer.address), payTo: await usdcBalance(PAY_TO) };
      expect(before.payer - after.payer).toBe(quoted);
      expect(after.payTo - before.payTo).toBe(quoted);
    } finally {
      expect(await stopService(service)).toBe(0);
    }
    expect(appServersOn(env.PORT!)).toBe("");
  });

  it("runs its built-in facilitator on the chain it is given (CHAIN_RPC_URL + FACILITATOR_PRIVATE_KEY)", async () => {
    // A settling account of the operator's own, with gas.
    const key = generatePrivateKey();
    await createTestClient({ mode: "anvil", transport: http(stack().chainRpcUrl) }).setBalance({
      address: privateKeyToAccount(key).address,
      value: parseEther("10"),
    });
    const env = {
      ...(await operatorEnvironment()),
      FACILITATOR_URL: "",
      FACILITATOR_AUTH_HEADER: "",
      CHAIN_RPC_URL: stack().chainRpcUrl,
      FACILITATOR_PRIVATE_KEY: key,
    };
    const service = await startService(env);
    try {
      expect(service.log.join("")).toMatch(
        new RegExp(
          `built-in facilitator http://127\\.0\\.0\\.1:\\d+, settling from ${privateKeyToAccount(key).address}`,
        ),
      );
      const payer = stack().payers[3]!;
      const body = chatBody("settled by the built-in facilitator");
      const quoted = BigInt((await quote("/v1/chat/completions", body, service.url)).accepts[0]!.amount);
      const before = await usdcBalance(PAY_TO);
      const completion = await payingOpenAI(payer.privateKey, `${service.url}/v1`).chat.completions.create(
        body as never,
      );
      expect(completion.choices).toHaveLength(1);
      expect((await usdcBalance(PAY_TO)) - before).toBe(quoted);
      // The app has the secret the facilitator serves it with, never the facilitator's key.
      const app = readFileSync(`/proc/${appServersOn(new URL(service.url).port).split("\n")[0]}/environ`, "utf8").split(
        "\0",
      );
      expect(app.filter((variable) => variable.includes(key.slice(2)))).toEqual([]);
      expect(app).toContainEqual(expect.stringMatching(/^FACILITATOR_BUILT_IN_AUTH_HEADER=Authorization: Bearer /));
    } finally {
      expect(await stopService(service)).toBe(0);
    }
  });

  it("runs a CDP-backed deployment with the built-in facilitator as its fallback", async () => {
    const key = generatePrivateKey();
    await createTestClient({ mode: "anvil", transport: http(stack().chainRpcUrl) }).setBalance({
      address: privateKeyToAccount(key).address,
      value: parseEther("10"),
    });
    // CDP's facilitator, played by the embedded one behind a front that checks CDP's JWT.
    const cdpKey = cdpApiKey("ed25519");
    const cdp = await startFacilitatorFront(facilitator.url, {
      authHeader: facilitator.authHeader,
      authorize: (request, path) =>
        cdpTokenProblem(request.headers.authorization, cdpKey, {
          method: request.method!,
          host: request.headers.host!,
          path,
        }),
    });
    const env: Record<string, string> = {
      ...(await operatorEnvironment()),
      FACILITATOR_URL: "",
      FACILITATOR_AUTH_HEADER: "",
      FACILITATORS: `cdp=${cdp.url},built-in`,
      FACILITATOR_CDP_AUTH: "cdp",
      CDP_API_KEY_ID: cdpKey.id,
      CDP_API_KEY_SECRET: cdpKey.secret,
      CHAIN_RPC_URL: stack().chainRpcUrl,
      FACILITATOR_PRIVATE_KEY: key,
      FACILITATOR_TIMEOUT_MS: "2000",
    };
    const service = await startService(env);
    const payer = stack().payers[3]!;
    const paidCall = async (content: string) => {
      const body = chatBody(content);
      const quoted = BigInt((await quote("/v1/chat/completions", body, service.url)).accepts[0]!.amount);
      const before = await usdcBalance(PAY_TO);
      await payingOpenAI(payer.privateKey, `${service.url}/v1`).chat.completions.create(body as never);
      expect((await usdcBalance(PAY_TO)) - before).toBe(quoted);
      // A whole answer's row is written right after the answer leaves.
      const row = () => {
        const database = new Database(env.DATABASE_URL!.slice("file:".length), { readonly: true });
        try {
          return database.prepare("select status, facilitator from payments order by id desc limit 1").get();
        } finally {
          database.close();
        }
      };
      await expect.poll(() => (row() as { status: string }).status).toBe("settled");
      return row();
    };
    try {
      const log = service.log.join("");
      expect(log).toContain("paysvc start: facilitator cdp: eip155:137: exact yes, upto yes");
      expect(log).toContain("paysvc start: facilitator built-in: eip155:137: exact yes, upto yes");
      expect(log).not.toContain(cdpKey.secret);
      expect(await paidCall("paid through CDP")).toEqual({ status: "settled", facilitator: "cdp" });
      expect(cdp.refused).toEqual([]);
      // CDP unreachable: the built-in facilitator verifies and settles.
      await cdp.refuse();
      expect(await paidCall("paid through the fallback")).toEqual({ status: "settled", facilitator: "built-in" });
    } finally {
      expect(await stopService(service)).toBe(0);
      await cdp.stop();
    }
  });

  it("start --check says which facilitator lacks the network and which lacks upto, and refuses when none has exact", async () => {
    const noNetwork = await startFacilitatorProxy(stack().facilitatorUrl);
    noNetwork.setSupported((kind) => kind.network !== "eip155:137");
    const noUpto = await startFacilitatorProxy(stack().facilitatorUrl);
    noUpto.setSupported((kind) => (kind as { scheme?: string }).scheme !== "upto");
    try {
      const env: Record<string, string> = {
        ...(await operatorEnvironment()),
        FACILITATOR_URL: "",
        FACILITATOR_AUTH_HEADER: "",
        FACILITATORS: `elsewhere=${noNetwork.url},exact-only=${noUpto.url}`,
      };
      const checked = await paysvc(["start", "--check"], 30_000, env);
      expect(checked.code, checked.stderr).toBe(0);
      expect(checked.stdout).toMatch(/^facilitator elsewhere \(.*\): does not list eip155:137 \(it lists /m);
      expect(checked.stdout).toMatch(/^facilitator exact-only \(.*\): eip155:137: exact yes, upto no$/m);
      const refused = await paysvc(["start"], 30_000, { ...env, FACILITATORS: `elsewhere=${noNetwork.url}` });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/^paysvc start: no facilitator \(elsewhere\) lists exact payments on eip155:137/m);
      expect(await listening(env.PORT!)).toBe(false);
    } finally {
      await noNetwork.stop();
      await noUpto.stop();
    }
  });
});

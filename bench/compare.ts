// npm run bench:compare -- <other checkout> [requests]: the before/after of a change to the app server. Two app
// servers, the other checkout's and this one's, run side by side on one embedded stack (one chain, facilitator and
// local upstream), each with a database of its own (so that a change of schema can be compared), and are started
// the same way; prepaid chat completions go to each in turn, with a direct call to the upstream between them, the
// order rotating every round, so that the load of a shared machine falls on all three. Prints each one's added
// p50/p99 over the direct call and its CPU per request. The other checkout needs its node_modules and a production
// build (`.next`), e.g. symlinks to this checkout's when app/ is unchanged.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startGuardedProcess, type GuardedProcess } from "../cli/dev-stack/guarded-process";
import { freePort } from "../cli/dev-stack/next-app";
import { waitFor } from "../cli/dev-stack/wait-for";
import { buyBenchKey } from "./lib/buy-bench-key";
import { cpuMs } from "./lib/process-cpu";
import { environmentOfServer, pidListeningOn } from "./lib/process-memory";
import { startBenchStack } from "./lib/bench-stack";
import { ms, percentile, rotate } from "./lib/stats";

const [otherCheckout, requestsArgument] = process.argv.slice(2);
if (!otherCheckout) throw new Error("usage: npm run bench:compare -- <other checkout> [requests per round]");
const requests = Number(requestsArgument ?? 1500);
const WARM_UP = 2500;

const stack = await startBenchStack({ deltaGapMs: 20, deltas: 64 });
// Both app servers get the environment of the stack's own (which stays idle), and are started the same way: the
// stack's app logs through a pipe its launcher reads, which measurably changes its cost per request.
const environment = environmentOfServer(stack.appUrl);
const servers: (GuardedProcess & { name: string; url: string; pid: number })[] = [];
const databases = mkdtempSync(join(tmpdir(), "paysvc-compare-"));

async function startApp(name: string, checkout: string) {
  const port = await freePort();
  const app = startGuardedProcess(
    process.execPath,
    [join(checkout, "app/serve.mjs"), "--port", String(port), "--hostname", "127.0.0.1"],
    {
      output: "ignore",
      cwd: checkout,
      env: { ...environment, PORT: String(port), DATABASE_URL: `file:${join(databases, `${name}.sqlite`)}` },
    },
  );
  const url = `http://127.0.0.1:${port}`;
  await waitFor(async () => (await fetch(`${url}/v1/models`).catch(() => undefined))?.ok === true, {
    timeoutMs: 60_000,
    what: `the app server of ${checkout}`,
  });
  servers.push({ ...app, name, url, pid: pidListeningOn(port)! });
}

try {
  await startApp("other", resolve(otherCheckout));
  await startApp("this", process.cwd());
  const keys: string[] = [];
  for (const server of servers) keys.push(await buyBenchKey(server.url));
  const body = JSON.stringify({
    model: "vendor-a/gpt-6-luna",
    messages: [{ role: "user", content: "benchmark" }],
    max_tokens: 16,
  });
  const call = (url: string, headers: Record<string, string>) => async () => {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body,
    });
    if (response.status !== 200) throw new Error(`${url} answered ${response.status}`);
    await response.text();
  };
  const tasks = [
    ...servers.map((server, index) =>
      call(`${server.url}/v1/chat/completions`, { authorization: `Bearer ${keys[index]!}` }),
    ),
    call(`${stack.upstreamBaseUrl}/chat/completions`, {}),
  ];
  for (let round = 0; round < WARM_UP; round++) for (const task of tasks) await task();
  console.log(`other: ${resolve(otherCheckout)}; this: ${process.cwd()}; ${requests} requests each, twice`);
  for (let repeat = 0; repeat < 2; repeat++) {
    const cpuBefore = servers.map((server) => cpuMs(server.pid));
    const durations = await rotate(requests, tasks);
    const direct = durations[servers.length]!;
    const line = servers.map((server, index) => {
      const added = (p: number) => ms(percentile(durations[index]!, p) - percentile(direct, p));
      return `${server.name}: added p50 ${added(50)} p99 ${added(99)}, CPU ${ms((cpuMs(server.pid) - cpuBefore[index]!) / requests)} per request`;
    });
    console.log(`${line.join("; ")}; direct p50 ${ms(percentile(direct, 50))}`);
  }
} finally {
  for (const server of servers) await server.stop();
  await stack.stopAll();
  rmSync(databases, { recursive: true, force: true });
}

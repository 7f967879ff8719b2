// npm run bench:profile [-- <seconds> [connections] [stream|channels|quote] [responses] [traced] [limited]]: where the app
// server's CPU goes on the prepaid chat path (`quote`: on unpaid chat calls, each answered 402; `traced`: with every
// span exported to a collector in this process). Starts the benchmark's stack, a second app server under `node --cpu-prof` with the same environment,
// drives prepaid chat completions at it with autocannon (16 connections unless told; `stream` for streamed ones;
// `channels`: calls paid from one batch-settlement channel instead, one at a time, each a 402 and a voucher, by the
// official client), stops it so that V8 writes the
// profile, and prints the top entries by self time and by inclusive time, and the profile's path (open it in
// Chrome's DevTools or speedscope).
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { wrapFetchWithPayment } from "@x402/fetch";
import { startGuardedProcess } from "../cli/dev-stack/guarded-process";
import { freePort } from "../cli/dev-stack/next-app";
import { waitFor } from "../cli/dev-stack/wait-for";
import { buyBenchKey } from "./lib/buy-bench-key";
import { startBenchStack } from "./lib/bench-stack";
import { batchSettlementClient } from "./lib/channel-section";
import { environmentOfServer } from "./lib/process-memory";
import { sustainedRate } from "./lib/sustained-rate";
import { codexShapedBody } from "./lib/dialect-section";
import { startOtlpReceiver } from "../e2e/support/otlp-receiver";
import { LIMITS_ON } from "./lib/limits-section";

const seconds = Number(process.argv[2] ?? 20);
const connections = Number(process.argv.slice(3).find((argument) => /^\d+$/.test(argument)) ?? 16);
const streaming = process.argv.includes("stream");
const channels = process.argv.includes("channels");
const quoting = process.argv.includes("quote");
/** `responses`: the calls are Codex-shaped Responses calls (bench/lib/dialect-section.ts's) instead of chat ones. */
const responsesApi = process.argv.includes("responses");
/** `traced`: the profiled app exports every span to an OTLP/HTTP collector in this process (what tracing costs). */
const traced = process.argv.includes("traced");
/** `limited`: the profiled app has every key limit on, far above the run's pace (what section 14 measures). */
const limited = process.argv.includes("limited");

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Self and inclusive time per function (name, file, line), in percent of the profile's samples. */
function summarise(profile: CpuProfile, top: number): string {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const label = (node: ProfileNode) => {
    const { functionName, url, lineNumber } = node.callFrame;
    const file = url.replace(/^file:\/\//, "").replace(process.cwd() + "/", "");
    return `${functionName || "(anonymous)"} ${file ? `${file}:${lineNumber + 1}` : ""}`.trim();
  };
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, index) => {
    const delta = profile.timeDeltas[index] ?? 0;
    total += delta;
    const node = byId.get(id)!;
    self.set(label(node), (self.get(label(node)) ?? 0) + delta);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const name = label(byId.get(at)!);
      if (seen.has(name)) continue;
      seen.add(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + delta);
    }
  });
  const busy = total - (self.get("(idle)") ?? 0);
  const lines = (table: Map<string, number>) =>
    [...table]
      .filter(([name]) => !["(idle)", "(root)", "(program)"].includes(name))
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, time]) => `${((100 * time) / busy).toFixed(1).padStart(5)} %  ${name}`)
      .join("\n");
  return `busy ${(busy / 1000).toFixed(0)} ms of ${(total / 1000).toFixed(0)} ms sampled; percent of busy time\n\n## self\n${lines(self)}\n\n## inclusive\n${lines(inclusive)}`;
}

const stack = await startBenchStack({ deltaGapMs: streaming ? 5 : 20, deltas: streaming ? 16 : 64 });
const collector = traced ? await startOtlpReceiver() : undefined;
try {
  const environment = {
    ...environmentOfServer(stack.appUrl),
    ...(collector && { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_BSP_SCHEDULE_DELAY: "500" }),
    ...(limited && LIMITS_ON),
  };
  const profileDir = mkdtempSync(join(tmpdir(), "paysvc-profile-"));
  const port = await freePort();
  const app = startGuardedProcess(
    process.execPath,
    ["--cpu-prof", `--cpu-prof-dir=${profileDir}`, "app/serve.mjs", "--port", String(port), "--hostname", "127.0.0.1"],
    { output: "ignore", env: { ...environment, PORT: String(port) } },
  );
  const url = `http://127.0.0.1:${port}`;
  await waitFor(async () => (await fetch(`${url}/v1/models`).catch(() => undefined))?.ok === true, {
    timeoutMs: 60_000,
    what: "the profiled app server",
  });
  if (channels) {
    // One channel's calls in a row for `seconds` (after 5 s of the same), each a 402 then the voucher.
    const paid = wrapFetchWithPayment(fetch, batchSettlementClient(stack.chainRpcUrl));
    const call = async () => {
      const response = await paid(`${url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          model: "vendor-a/gpt-6-luna",
          messages: [{ role: "user", content: "b" }],
          max_tokens: 16,
        }),
      });
      if (response.status !== 200)
        throw new Error(`a channel call answered ${response.status}: ${await response.text()}`);
      await response.text();
    };
    const callsFor = async (duration: number) => {
      let answered = 0;
      for (const end = performance.now() + duration * 1000; performance.now() < end; answered++) await call();
      return answered;
    };
    await callsFor(5);
    const answered = await callsFor(seconds);
    console.log(`${answered} channel-paid chat calls, ${(answered / seconds).toFixed(0)}/s`);
  }
  // Keys of 1,000,000 tokens (the largest pack), enough for about 40,000 calls each; calls take them in turn.
  const codes: string[] = [];
  for (let index = 0; index < (channels || quoting ? 0 : 2 + Math.ceil(seconds / 10)); index++) {
    codes.push(await buyBenchKey(url));
  }
  let turn = 0;
  const chat = {
    url: `${url}${responsesApi ? "/v1/responses" : "/v1/chat/completions"}`,
    method: "POST" as const,
    headers: { "content-type": "application/json" },
    headersFor: (): Record<string, string> =>
      quoting ? {} : { authorization: `Bearer ${codes[turn++ % codes.length]!}` },
    body: JSON.stringify(
      responsesApi
        ? { ...codexShapedBody(streaming), max_output_tokens: streaming ? 400 : 16 }
        : {
            model: "vendor-a/gpt-6-luna",
            messages: [{ role: "user", content: "benchmark" }],
            max_tokens: streaming ? 400 : 16,
            stream: streaming,
          },
    ),
    connections,
    status: quoting ? 402 : 200,
  };
  if (!channels) {
    await sustainedRate({ ...chat, seconds: 5 });
    const { perSecond, answered } = await sustainedRate({ ...chat, seconds });
    const kind = quoting ? "unpaid (402)" : `prepaid ${streaming ? "streamed " : ""}`;
    console.log(`${answered} ${kind} chat calls, ${perSecond.toFixed(0)}/s`);
  }
  await app.stop();
  const file = readdirSync(profileDir).find((name) => name.endsWith(".cpuprofile"));
  if (!file) throw new Error(`no profile written in ${profileDir}`);
  console.log(`profile: ${join(profileDir, file)}`);
  console.log(summarise(JSON.parse(readFileSync(join(profileDir, file), "utf8")) as CpuProfile, 30));
} finally {
  await collector?.stop();
  await stack.stopAll();
}

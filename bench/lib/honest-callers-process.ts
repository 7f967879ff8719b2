// Honest callers of one app (from 127.0.0.3), in a process of their own so that an attack sent by the benchmark's
// process does not delay their own event loop and figures: `node --import tsx bench/lib/honest-callers-process.ts
// <app URL> <prepaid key> <delta gap ms> <streams>` prints "ready"; each "start" line on its stdin starts <streams> streams read in a
// loop and /health asked every 10 ms, each "stop" line stops them and prints a JSON line: the longest delay of a
// streamed delta beyond the upstream's pacing, the slowest /health answer (ms), and how many streams ended.
import { createInterface } from "node:readline";
import { Agent, setGlobalDispatcher } from "undici";
import { timedStream } from "./timed-stream";

// From an address of their own: the attack's bounds on its addresses do not hold them.
setGlobalDispatcher(new Agent({ localAddress: "127.0.0.3" }));

const [appUrl, key, gap, count] = process.argv.slice(2) as [string, string, string, string];
const gapMs = Number(gap);
const body = JSON.stringify({
  model: "vendor-a/gpt-6-luna",
  messages: [{ role: "user", content: "benchmark" }],
  max_tokens: 400,
  stream: true,
});

let running = false;
let worstDelta = 0;
let slowestHealth = 0;
let streams = 0;
let failures: string[] = [];
let tasks: Promise<void>[] = [];

function start(): void {
  running = true;
  worstDelta = slowestHealth = streams = 0;
  failures = [];
  const lane = async () => {
    while (running) {
      try {
        worstDelta = Math.max(
          worstDelta,
          ...(await timedStream(`${appUrl}/v1/chat/completions`, { authorization: `Bearer ${key}` }, body, gapMs)).gaps,
        );
        streams++;
      } catch (error) {
        failures.push((error as Error).message);
      }
    }
  };
  const probe = async () => {
    while (running) {
      const started = performance.now();
      const answer = await fetch(`${appUrl}/health`).catch((error: Error) => error);
      if (answer instanceof Error) failures.push(`/health: ${answer.message}`);
      else await answer.body?.cancel();
      slowestHealth = Math.max(slowestHealth, performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  tasks = [...Array.from({ length: Number(count) }, lane), probe()];
}

async function stop(): Promise<void> {
  running = false;
  await Promise.all(tasks);
  console.log(JSON.stringify({ worstDelta, slowestHealth, streams, failures: failures.slice(0, 5) }));
}

createInterface({ input: process.stdin })
  .on("line", (line) => {
    if (line === "start") start();
    else if (line === "stop") void stop();
  })
  // The benchmark gone: so are its callers.
  .on("close", () => process.exit(0));
console.log("ready");

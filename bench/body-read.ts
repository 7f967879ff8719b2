// npm run bench:body [-- <other checkout>]: reading the largest request bodies (24 MB, the cap) in this process, as
// the app server's handlers read them (server/http/read-json-body.ts), each body streamed in 64 KB chunks: the
// longest the event loop was held at once while reading it (the longest gap between two ticks of a 1 ms timer,
// with the process CPU spent in that gap: preemption by other processes shows as a gap without CPU), and the CPU
// time of the whole read (a worker thread's included). With another checkout, its reader is measured too, the two
// taking turns each round.
import { resolve } from "node:path";
import { manyWordsText } from "./lib/large-quote-section";

type Reader = (request: unknown) => Promise<{ value: unknown; sha256: string }>;

const LARGEST = 24 * 1024 * 1024;
const ROUNDS = 3;

/** `count` messages of `parts` short text parts each: the most values JSON.parse builds from a body allowed in. */
const messages = (count: number, parts: number) =>
  Array.from({ length: count }, (_, index) => ({
    role: "user",
    content: Array.from({ length: parts }, (_, part) => ({ type: "text", text: `hello ${index}.${part}` })),
  }));
const chat = (content: string) =>
  JSON.stringify({ model: "vendor-a/gpt-6-luna", messages: [{ role: "user", content }] });
const room = LARGEST - 200;
const manyParts = JSON.stringify({ model: "vendor-a/gpt-6-luna", messages: messages(16_384, 19) });
const bodies: [string, string][] = [
  ["one text of many words", chat(manyWordsText(room))],
  ["one text of emoji", chat("\u{1F600}".repeat(room / 4))],
  ["one text of quotes, newlines and backslashes", chat('a"\n\\'.repeat(room / 8))],
  ["16,384 messages of 19 text parts (983,000 values)", manyParts],
  [
    "960,000 numbers in 60 arrays",
    JSON.stringify({
      model: "vendor-a/gpt-6-luna",
      x: Array.from({ length: 60 }, (_, row) => Array.from({ length: 16_000 }, (_, i) => (row + i) * 1.2345)),
    }),
  ],
  ["16,384 messages of 19 text parts, cut short (invalid)", manyParts.slice(0, -2)],
  [
    "12 million junk elements (refused by its shape)",
    `{"model":"vendor-a/gpt-6-luna","messages":[${"1,".repeat(room / 2 - 50)}1]}`,
  ],
];

/** A request whose body arrives in 64 KB chunks, one per turn of the event loop, as a socket delivers it. */
function streamed(bytes: Buffer) {
  let at = 0;
  return {
    method: "POST",
    url: "http://bench.test/v1/chat/completions",
    headers: { get: (name: string) => (name === "content-type" ? "application/json" : null) },
    body: new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (at >= bytes.length) return controller.close();
        await new Promise((done) => setImmediate(done));
        controller.enqueue(new Uint8Array(bytes.subarray(at, at + 65_536)));
        at += 65_536;
      },
    }),
  };
}

async function readOnce(read: Reader, bytes: Buffer) {
  let last = performance.now();
  let lastCpu = process.cpuUsage();
  let hold = 0;
  let holdCpu = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    const cpu = process.cpuUsage();
    if (now - last > hold) {
      hold = now - last;
      holdCpu = (cpu.user + cpu.system - lastCpu.user - lastCpu.system) / 1000;
    }
    last = now;
    lastCpu = cpu;
  }, 1);
  const cpu = process.cpuUsage();
  let outcome = "read";
  try {
    await read(streamed(bytes));
  } catch (error) {
    outcome = (error as Error).message.slice(0, 40);
  }
  const used = process.cpuUsage(cpu);
  // One more tick, so that a hold at the very end is seen.
  await new Promise((done) => setTimeout(done, 5));
  clearInterval(timer);
  return { hold, holdCpu, cpu: (used.user + used.system) / 1000, outcome };
}

const checkouts = [resolve("."), ...process.argv.slice(2).map((path) => resolve(path))];
const readers: Reader[] = [];
for (const checkout of checkouts) {
  readers.push(((await import(`${checkout}/server/http/read-json-body.ts`)) as { readJsonBody: Reader }).readJsonBody);
}
const round = (values: number[]) => values.map((value) => value.toFixed(0)).join(", ");
for (const [name, text] of bodies) {
  const bytes = Buffer.from(text);
  if (bytes.length > LARGEST) throw new Error(`${name}: ${bytes.length} bytes, over the cap`);
  const runs = readers.map(() => [] as Awaited<ReturnType<typeof readOnce>>[]);
  for (let index = 0; index < ROUNDS; index++) {
    for (const [at, read] of readers.entries()) runs[at]!.push(await readOnce(read, bytes));
  }
  console.log(`${(bytes.length / 2 ** 20).toFixed(1)} MB, ${name} (${runs[0]![0]!.outcome}):`);
  for (const [at, checkout] of checkouts.entries()) {
    const run = runs[at]!;
    console.log(
      `  ${checkout}: longest hold ${round(run.map((r) => r.hold))} ms (CPU in it ${round(run.map((r) => r.holdCpu))}); CPU of the read ${round(run.map((r) => r.cpu))} ms`,
    );
  }
}

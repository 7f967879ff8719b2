import type { RunningStack } from "../../cli/dev-stack/start-stack";
import { buyBenchKey } from "./buy-bench-key";
import { cpuMs } from "./process-cpu";
import { pidListeningOn } from "./process-memory";
import { ms, runConcurrently } from "./stats";

const MODEL = "vendor-a/gpt-6-luna";

/**
 * A short Responses call shaped as Codex sends it: developer and user messages, reasoning, include, store, text, cache
 * key, metadata.
 */
export const codexShapedBody = (stream: boolean) => ({
  model: MODEL,
  input: [
    { type: "message", role: "developer", content: [{ type: "input_text", text: "You are a coding agent." }] },
    { type: "message", role: "user", content: [{ type: "input_text", text: "benchmark" }] },
  ],
  max_output_tokens: 16,
  reasoning: { effort: "medium" },
  include: ["reasoning.encrypted_content"],
  store: false,
  text: { verbosity: "low" },
  prompt_cache_key: "bench",
  client_metadata: { bench: "1" },
  stream,
});

/** The same short call (max 16 output tokens) in each API the gateway answers, billed to one prepaid key. */
const dialects = {
  chat: {
    path: "/v1/chat/completions",
    body: (stream: boolean) => ({
      model: MODEL,
      messages: [{ role: "user", content: "benchmark" }],
      max_tokens: 16,
      stream,
    }),
  },
  "Responses (Codex-shaped)": { path: "/v1/responses", body: (stream: boolean) => codexShapedBody(stream) },
  Messages: {
    path: "/v1/messages",
    body: (stream: boolean) => ({
      model: MODEL,
      system: [{ type: "text", text: "You are a coding agent." }],
      messages: [{ role: "user", content: "benchmark" }],
      max_tokens: 16,
      stream,
    }),
  },
};

/**
 * The app server's CPU per call of each dialect, whole and streamed, beside chat's: what translating a call and its
 * answer costs. Blocks of each dialect take turns, so that all see the same load of the machine; a stream's cost
 * beyond chat's is divided by its deltas.
 */
export async function dialectSection(options: {
  stack: RunningStack;
  calls: number;
  streams: number;
  rounds: number;
  deltas: number;
}): Promise<string[]> {
  const { stack, calls, streams, rounds, deltas } = options;
  const appPid = pidListeningOn(Number(new URL(stack.appUrl).port));
  if (appPid === undefined) throw new Error("app server process not found");
  const key = await buyBenchKey(stack.appUrl);
  const call = async (path: string, body: unknown) => {
    const response = await fetch(`${stack.appUrl}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`${path} answered ${response.status}: ${text.slice(0, 200)}`);
  };
  const entries = Object.entries(dialects);
  const cpu = (stream: boolean, count: number, concurrency: number) =>
    Object.fromEntries(entries.map(([name]) => [name, { ms: 0, calls: 0, count, concurrency, stream }]));
  const whole = cpu(false, calls, 1);
  const streamed = cpu(true, streams, Math.min(streams, 32));
  // Warm-up of every path, whole and streamed.
  for (const [, dialect] of entries) {
    await runConcurrently(Math.max(2, Math.floor(calls / 2)), 1, () => call(dialect.path, dialect.body(false)));
    await runConcurrently(Math.min(streams, 32), 32, () => call(dialect.path, dialect.body(true)));
  }
  for (let round = 0; round < rounds; round++) {
    for (const runs of [whole, streamed]) {
      for (const [name, dialect] of entries) {
        const run = runs[name]!;
        const before = cpuMs(appPid);
        await runConcurrently(run.count, run.concurrency, () => call(dialect.path, dialect.body(run.stream)));
        run.ms += cpuMs(appPid) - before;
        run.calls += run.count;
      }
    }
  }
  const per = (run: { ms: number; calls: number }) => run.ms / run.calls;
  const chatWhole = per(whole.chat!);
  const chatStreamed = per(streamed.chat!);
  return [
    `whole (max_tokens 16, ${calls} a block, ${rounds} blocks each): ${entries
      .map(([name]) => `${name} ${ms(per(whole[name]!))}`)
      .join(", ")} of app CPU per call`,
    `streamed (${deltas} deltas, ${streams} a block, ${rounds} blocks each): ${entries
      .map(([name]) => `${name} ${ms(per(streamed[name]!))}`)
      .join(", ")} of app CPU per stream`,
    ...entries
      .filter(([name]) => name !== "chat")
      .map(
        ([name]) =>
          `${name} beyond chat: ${ms(per(whole[name]!) - chatWhole)} per whole call (target <= 0.2 ms), ${(((per(streamed[name]!) - chatStreamed) / deltas) * 1000).toFixed(1)} us per delta (target <= 10 us)`,
      ),
  ];
}

// What the rate limits cost a prepaid call: the bench stack's app server (limits off) beside one with every key
// limit on (far above what the run reaches).
import type { RunningStack } from "../../cli/dev-stack/start-stack";
import { prepaidPair } from "./prepaid-pair";
import { ms } from "./stats";

/** Key limits on, none of them reached in the run: each call pays the check, never a refusal. */
export const LIMITS_ON = {
  RATE_LIMIT_KEY_RPM: "10000000",
  RATE_LIMIT_KEY_TPM: "1000000000",
  RATE_LIMIT_KEY_CONCURRENT: "1000",
};

export async function limitsSection(stack: RunningStack, calls: number): Promise<string[]> {
  const { stock: off, changed: on } = await prepaidPair(stack, calls, LIMITS_ON, { freshStock: true });
  // At 16 calls at once, in 8 rounds that alternate the servers (the machine's load shifts within a run).
  const rounds = calls >= 800 ? 8 : 1;
  const at16 = await prepaidPair(stack, calls * 2, LIMITS_ON, { concurrency: 16, rounds, freshStock: true });
  return [
    `prepaid chat completion, ${calls} each in turn: limits off p50 ${ms(off.p50)}, CPU ${ms(off.cpu)} per call; key limits on (requests, tokens, concurrent) p50 ${ms(on.p50)}, CPU ${ms(on.cpu)} per call`,
    `the limits cost ${ms(on.p50 - off.p50)} at p50 and ${ms(on.cpu - off.cpu)} of CPU per call at concurrency 1 (target <= 0.1 ms)`,
    `at concurrency 16, ${calls * 2} calls each: app CPU per call ${ms(at16.stock.cpu)} off, ${ms(at16.changed.cpu)} on: the limits cost ${ms(at16.changed.cpu - at16.stock.cpu)} (target <= 0.1 ms); p50 ${ms(at16.stock.p50)} off, ${ms(at16.changed.p50)} on`,
    "each limited call is one statement on its subject's row to be let in and one as it ends (on PostgreSQL too)",
  ];
}

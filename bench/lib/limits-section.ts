// What the rate limits cost a prepaid call: the bench stack's app server (limits off) beside one with every key
// limit on (far above what the run reaches).
import type { RunningStack } from "../../cli/dev-stack/start-stack";
import { prepaidPair } from "./prepaid-pair";
import { ms } from "./stats";

/** Key limits on, none of them reached in the run: each call pays the check, never a refusal. */
const LIMITS_ON = {
  RATE_LIMIT_KEY_RPM: "10000000",
  RATE_LIMIT_KEY_TPM: "1000000000",
  RATE_LIMIT_KEY_CONCURRENT: "1000",
};

export async function limitsSection(stack: RunningStack, calls: number): Promise<string[]> {
  const { stock: off, changed: on } = await prepaidPair(stack, calls, LIMITS_ON);
  return [
    `prepaid chat completion, ${calls} each in turn: limits off p50 ${ms(off.p50)}, CPU ${ms(off.cpu)} per call; key limits on (requests, tokens, concurrent) p50 ${ms(on.p50)}, CPU ${ms(on.cpu)} per call`,
    `the limits cost ${ms(on.p50 - off.p50)} at p50 (target <= 0.2 ms on SQLite) and ${ms(on.cpu - off.cpu)} of CPU per call; on PostgreSQL they are one statement more per call (paysvc_take_rate_limit) and one after it ends`,
  ];
}

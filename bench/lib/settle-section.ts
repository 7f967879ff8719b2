import type { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { headerAuth } from "../../cli/lib/facilitator-server";
import { ms, percentile } from "./stats";

/** A `Name: value` header as fetch takes it. */
function headerOf(line: string): Record<string, string> {
  const { name, value } = headerAuth(line);
  return { [name]: value };
}

export interface SettleSectionInput {
  appUrl: string;
  facilitatorUrl: string;
  /** Its credentials, `Name: value`: the embedded facilitator serves its own app only. */
  facilitatorAuthHeader: string;
  /** A client that signs for a funded payer of the deployment's network. */
  client: x402Client;
  /** The JSON body of a paid chat completion: its 402 gives the requirements every settlement pays. */
  body: string;
  settles: number;
  say(line: string): void;
}

/**
 * Section 8: the embedded facilitator's settlement alone, one after the other, each a payment signed beforehand
 * for the requirements of one 402 of the app. A settlement returns once the transfer's receipt is read, so its
 * tail is how often the facilitator's chain client has to wait for its next poll.
 */
export async function settleSection(input: SettleSectionInput): Promise<void> {
  const { say } = input;
  say(`\n## 8. Settlement at the embedded facilitator (${input.settles} in turn, signed beforehand)`);
  const challenge = await fetch(`${input.appUrl}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: input.body,
  });
  const required = await paymentRequired(input.appUrl, challenge);
  const [requirements] = required.accepts;
  if (!requirements) throw new Error("the 402 offers no payment requirements");
  const payloads = [];
  for (let index = 0; index < input.settles; index++) payloads.push(await input.client.createPaymentPayload(required));
  const durations: number[] = [];
  for (const paymentPayload of payloads) {
    const begin = performance.now();
    const response = await fetch(`${input.facilitatorUrl}/settle`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headerOf(input.facilitatorAuthHeader) },
      body: JSON.stringify({ x402Version: 2, paymentPayload, paymentRequirements: requirements }),
    });
    const result = (await response.json()) as { success?: boolean; errorReason?: string };
    durations.push(performance.now() - begin);
    if (!result.success) throw new Error(`a settlement failed: ${response.status} ${result.errorReason ?? ""}`);
  }
  const slow = durations.filter((duration) => duration > 1000).length;
  say(
    `settle p50 ${ms(percentile(durations, 50))} p99 ${ms(percentile(durations, 99))} max ${ms(Math.max(...durations))}; over 1 s: ${slow} of ${durations.length}`,
  );
}

/** The payment requirements of a paid chat completion's 402. */
async function paymentRequired(appUrl: string, challenge: Response) {
  await challenge.text();
  const header = challenge.headers.get("payment-required");
  if (challenge.status !== 402 || !header) throw new Error(`expected a 402 from ${appUrl}, got ${challenge.status}`);
  return decodePaymentRequiredHeader(header);
}

import { createHash } from "node:crypto";
import { encode, decode } from "gpt-tokenizer/encoding/o200k_base";
import { contentText, type CountableMessage } from "../../server/pricing/count-tokens";

const VOCABULARY = (
  "gateway ledger quote signature settle verify token stream chunk model budget payer receipt nonce " +
  "request answer local deterministic provider echo network asset amount credit window limit route " +
  "harbor lantern meadow river summit orchard compass beacon anchor canyon glacier prairie willow " +
  "quartz ember falcon maple copper silver cobalt amber violet indigo crimson jade ivory onyx"
).split(" ");

export interface DevCompletion {
  text: string;
  completionTokens: number;
  finishReason: "stop" | "length";
}

/**
 * The development provider's answer: deterministic text derived from the model and the messages (same input,
 * same answer), opening with an echo of the last user message (or tool result) so a reader can tell answers apart. Cut at
 * `maxTokens`, like a real model, with finish_reason "length".
 */
export function devCompletion(model: string, messages: readonly CountableMessage[], maxTokens: number): DevCompletion {
  const digest = createHash("sha256").update(model).update("\0").update(JSON.stringify(messages)).digest();
  const lastInput = [...messages].reverse().find((message) => message.role === "user" || message.role === "tool");
  const echo = contentText(lastInput?.content).replace(/\s+/g, " ").trim().slice(0, 60);
  const subject = lastInput?.role === "tool" ? "the tool result " : "";
  // `[paysvc-dev-long]` asks for an answer that runs to the output cap, as a talkative model's would.
  const long = contentText(lastInput?.content).includes("[paysvc-dev-long]");
  const wordCount = long ? maxTokens + 16 : 12 + ((digest[0] ?? 0) % 20);
  const words = Array.from(
    { length: wordCount },
    (_, index) => VOCABULARY[(digest[(index + 1) % digest.length] ?? 0) % VOCABULARY.length],
  );
  const full = `Local development reply to ${subject}"${echo}": ${words.join(" ")}.`;
  const tokens = encode(full, { disallowedSpecial: new Set() });
  if (tokens.length <= maxTokens) return { text: full, completionTokens: tokens.length, finishReason: "stop" };
  // Cut at the cap, and report the cap, as a model that stopped there does.
  return { text: decode(tokens.slice(0, maxTokens)), completionTokens: maxTokens, finishReason: "length" };
}

/** Splits text into `count` deltas of nearly equal length (at least one character each). */
export function splitIntoDeltas(text: string, count: number): string[] {
  const pieces = Math.max(1, Math.min(count, text.length));
  const size = Math.ceil(text.length / pieces);
  const deltas: string[] = [];
  for (let start = 0; start < text.length; start += size) deltas.push(text.slice(start, start + size));
  return deltas.length > 0 ? deltas : [""];
}

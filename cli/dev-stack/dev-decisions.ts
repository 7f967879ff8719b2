import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { countTextTokens } from "../../server/pricing/count-tokens";
import { failedAnswer, type DevFaults } from "./dev-faults";
import { readJson, sendJson } from "../lib/json-http-server";

interface Question {
  type?: unknown;
  instructions?: unknown;
}

/** Options a `choice` question offers: "... one of: red, green or blue" -> [red, green, blue]. */
function optionsOf(instructions: string): string[] {
  const list = /:\s*([^:]+)$/.exec(instructions)?.[1] ?? "";
  const options = list
    .split(/,|\bor\b|\//)
    .map((option) => option.trim().replace(/[.?!]+$/, ""))
    .filter((option) => option.length > 0);
  return options.length >= 2 ? options : ["yes", "no"];
}

function answerTo(state: string, name: string, question: Question): Record<string, unknown> {
  const instructions = String(question.instructions ?? "");
  const digest = createHash("sha256").update(`${state}\0${name}\0${instructions}`).digest();
  switch (question.type) {
    case "noul":
      return { type: "noul", noul: digest.readUInt16BE(0) % 1000 };
    case "choice": {
      const options = optionsOf(instructions);
      return { type: "choice", choice: options[digest[0]! % options.length] };
    }
    default:
      return { type: "score", score: Math.round((digest.readUInt16BE(2) / 0xffff) * 100) / 100 };
  }
}

/**
 * POST /v1/decisions: the development decision provider answers every question deterministically from its text:
 * `noul` a number, `choice` one of the options listed after the last colon (else yes/no), `score` 0 to 1.
 */
export async function devDecisions(
  request: IncomingMessage,
  response: ServerResponse,
  faults: DevFaults,
): Promise<void> {
  const body = (await readJson(request)) as { state?: unknown; questions?: Record<string, Question> };
  const state = String(body.state ?? "");
  const fault = faults.in(state);
  const failed = failedAnswer(fault);
  if (failed === "hang") return; // never answers; the caller's timeout must fire
  if (failed) return sendJson(response, failed.status, failed.body, failed.headers);
  const questions = Object.entries(body.questions ?? {});
  const answers = Object.fromEntries(
    questions.map(([name, question]) => [
      name,
      fault === "bad-shape" ? { type: question.type, value: "?" } : answerTo(state, name, question),
    ]),
  );
  const inputTokens =
    countTextTokens(state) +
    questions.reduce(
      (sum, [name, question]) => sum + countTextTokens(name) + countTextTokens(String(question.instructions)),
      0,
    );
  sendJson(response, 200, {
    answers,
    usage: { input_tokens: inputTokens, output_tokens: countTextTokens(JSON.stringify(answers)) },
  });
}

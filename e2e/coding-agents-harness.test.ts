import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { writeAnthropicTextStream, writeResponsesTextStream } from "./support/canned-agent-streams";
import { runClaudeCode, runCodex } from "./support/coding-agents";
import { startRecordingServer, type RecordedRequest, type RecordingServer } from "./support/recording-server";

/**
 * The harness that runs Claude Code and Codex CLI offline (e2e/support/coding-agents.ts), against a recording server
 * that answers with canned, valid streams: each agent sends exactly one request, carrying the key, and prints the
 * answer. The request's top-level fields are those recorded in e2e/__fixtures__/agents/, so a bumped agent that sends
 * a different request shows here first.
 */

const MODEL = "vendor-a/gpt-6-luna";
const KEY = "pk_harness_key";
const USAGE = { input_tokens: 33, output_tokens: 9 };

/** What the recording server answers: a canned stream, or an error status in the dialect's shape. */
let failWith: number | undefined;
let server: RecordingServer;

beforeAll(async () => {
  server = await startRecordingServer((request, response) => {
    const body = request.body as { model: string; input?: unknown };
    if (request.method !== "POST") return;
    if (request.path === "/v1/messages") {
      if (failWith) return void errorAnswer(response, failWith, { type: "error", error: errorOf(failWith) });
      writeAnthropicTextStream(response, body.model, `Claude answer for ${body.model}`, USAGE);
    } else if (request.path === "/v1/responses") {
      if (failWith) return void errorAnswer(response, failWith, { error: { ...errorOf(failWith), code: null } });
      writeResponsesTextStream(response, body.model, `Codex answer for ${body.model}`, USAGE);
    }
  });
});
afterEach(() => {
  server.requests.length = 0;
  failWith = undefined;
});
afterAll(() => server.close());

describe("Claude Code", () => {
  it("sends one streamed Messages request with the token as a Bearer and prints the streamed answer", async () => {
    const run = await runClaudeCode({ baseUrl: server.url, authToken: KEY, model: MODEL, prompt: "Say hello." });

    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(run.json).toMatchObject({ type: "result", is_error: false, result: `Claude answer for ${MODEL}` });
    expect(run.json?.usage).toMatchObject(USAGE);
    const request = onlyRequest();
    expect(request).toMatchObject({ method: "POST", path: "/v1/messages", query: { beta: "true" } });
    expect(request.headers).toMatchObject({ authorization: `Bearer ${KEY}`, "anthropic-version": "2023-06-01" });
    expect(request.headers["x-api-key"]).toBeUndefined();
    expect(request.headers["anthropic-beta"]).toContain("claude-code-20250219");
    expect(request.body).toMatchObject({ model: MODEL, max_tokens: 32000, stream: true });
    expect(bodyKeys(request)).toEqual(fixtureBodyKeys("claude-code-messages-request.json"));
  });

  it("fails with the server's status after one request: no retries", async () => {
    // Not a 400 or a 404: Claude Code answers those by asking again (see e2e/__fixtures__/agents/README.md).
    failWith = 401;
    const run = await runClaudeCode({ baseUrl: server.url, authToken: KEY, model: MODEL, prompt: "Say hello." });

    expect(run.exitCode).toBe(1);
    expect(run.json).toMatchObject({ is_error: true, api_error_status: 401 });
    expect(server.requests).toHaveLength(1);
  });
});

describe("Codex CLI", () => {
  it("sends one streamed Responses request with the key as a Bearer and prints the streamed answer", async () => {
    const run = await runCodex({ baseUrl: `${server.url}/v1`, apiKey: KEY, model: MODEL, prompt: "Say hello." });

    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(run.answer).toBe(`Codex answer for ${MODEL}`);
    expect(run.usage).toMatchObject(USAGE);
    const request = onlyRequest();
    expect(request).toMatchObject({ method: "POST", url: "/v1/responses" });
    expect(request.headers).toMatchObject({ authorization: `Bearer ${KEY}`, accept: "text/event-stream" });
    expect(request.body).toMatchObject({ model: MODEL, stream: true, store: false });
    expect(bodyKeys(request)).toEqual(fixtureBodyKeys("codex-responses-request.json"));
  });

  it("fails the turn with the server's error after one request: no retries", async () => {
    failWith = 400;
    const run = await runCodex({ baseUrl: `${server.url}/v1`, apiKey: KEY, model: MODEL, prompt: "Say hello." });

    expect(run.exitCode).toBe(1);
    expect(run.answer).toBeUndefined();
    expect(run.failure).toContain("canned 400");
    expect(server.requests).toHaveLength(1);
  });
});

function errorOf(status: number) {
  return { type: status === 401 ? "authentication_error" : "invalid_request_error", message: `canned ${status}` };
}

function errorAnswer(response: import("node:http").ServerResponse, status: number, body: unknown) {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(body));
}

/** The one request the agent sent: anything else (a probe, a retry, a second try) fails the test. */
function onlyRequest(): RecordedRequest {
  expect(server.requests.map((request) => `${request.method} ${request.url}`)).toHaveLength(1);
  return server.requests[0]!;
}

function bodyKeys(request: RecordedRequest) {
  return Object.keys(request.body as object).sort();
}

function fixtureBodyKeys(name: string) {
  const [recorded] = JSON.parse(readFileSync(join(import.meta.dirname, "__fixtures__", "agents", name), "utf8")) as {
    body: object;
  }[];
  return Object.keys(recorded!.body).sort();
}

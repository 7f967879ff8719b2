import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { writeAnthropicTextStream, writeResponsesTextStream } from "./canned-agent-streams";
import { runClaudeCode, runCodex } from "./coding-agents";
import { startRecordingServer, type RecordedRequest } from "./recording-server";

/**
 * Records what the pinned Claude Code and Codex send, into e2e/__fixtures__/agents/ (the key redacted, temporary
 * paths and the port replaced). Run again after bumping either devDependency:
 *   node --import tsx e2e/support/record-agent-fixtures.ts && npx prettier --write e2e/__fixtures__/agents
 */
const FIXTURES = join(import.meta.dirname, "..", "__fixtures__", "agents");
const FIXTURE_MODEL = "vendor-a/gpt-6-luna";
const FIXTURE_KEY = "pk_fixture_secret";
const ANSWER = "Hello from the recording server.";
const USAGE = { input_tokens: 21, output_tokens: 7 };

async function main() {
  const server = await startRecordingServer((request, response) => {
    const model = (request.body as { model?: string } | undefined)?.model ?? "";
    if (request.method === "POST" && request.path === "/v1/messages") {
      writeAnthropicTextStream(response, model, ANSWER, USAGE);
    } else if (request.method === "POST" && request.path === "/v1/responses") {
      writeResponsesTextStream(response, model, ANSWER, USAGE);
    }
  });
  try {
    const prompt = "Say hello.";
    const claude = await runClaudeCode({ baseUrl: server.url, authToken: FIXTURE_KEY, model: FIXTURE_MODEL, prompt });
    const claudeRequests = server.requests.splice(0);
    const codex = await runCodex({ baseUrl: `${server.url}/v1`, apiKey: FIXTURE_KEY, model: FIXTURE_MODEL, prompt });
    const codexRequests = server.requests.splice(0);
    if (claude.exitCode !== 0 || codex.exitCode !== 0) {
      throw new Error(`an agent failed:\n${claude.stdout}${claude.stderr}\n${codex.stdout}${codex.stderr}`);
    }
    const clean = (text: string) =>
      text
        .replaceAll(FIXTURE_KEY, "<redacted>")
        .replaceAll(server.url.replace("http://", ""), "<recording-server>")
        .replace(/\/tmp\/paysvc-(claude-code|codex)-[A-Za-z0-9]+/g, "<temporary home>");
    const write = (name: string, value: unknown) =>
      writeFileSync(
        join(FIXTURES, name),
        clean(typeof value === "string" ? value : JSON.stringify(value, null, 2) + "\n"),
      );
    write("claude-code-messages-request.json", claudeRequests.map(asFixture));
    write("claude-code-output.json", claude.json);
    write("codex-responses-request.json", codexRequests.map(asFixture));
    write("codex-exec-output.jsonl", codex.stdout);
    console.log(`recorded ${claudeRequests.length} Claude Code and ${codexRequests.length} Codex request(s)`);
  } finally {
    await server.close();
  }
}

function asFixture(request: RecordedRequest) {
  return { method: request.method, url: request.url, headers: request.headers, body: request.body };
}

if (process.argv[1] === import.meta.filename) await main();

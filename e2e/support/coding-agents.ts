import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/**
 * Claude Code and Codex CLI (the devDependencies, pinned) run as a new user would run them against a gateway, but
 * offline and isolated: a fresh temporary HOME (and CLAUDE_CONFIG_DIR / CODEX_HOME) per run, an environment built from
 * nothing but PATH (so no ANTHROPIC_API_KEY or OPENAI_* of the machine leaks in), no stdin, every non-essential request
 * (telemetry, update checks, plugin catalogs, analytics) turned off, so the one request each sends is to `baseUrl`.
 */

const require = createRequire(import.meta.url);
/** The installed `claude` command (the native binary the package's postinstall puts there). */
const CLAUDE_BIN = join(dirname(require.resolve("@anthropic-ai/claude-code/package.json")), "bin", "claude.exe");
/** The installed `codex` command: a Node launcher that runs the platform package's binary. */
const CODEX_LAUNCHER = join(dirname(require.resolve("@openai/codex/package.json")), "bin", "codex.js");

/** The environment variable the Codex provider reads its key from (`env_key`). */
export const CODEX_KEY_ENV = "PAYSVC_API_KEY";

export type AgentRun = {
  /** null when the process was killed (see timedOut). */
  exitCode: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
};

export type ClaudeCodeRun = AgentRun & {
  /** The one JSON object `--output-format json` prints (`result`, `is_error`, `usage`, ...), when it printed one. */
  json: ClaudeCodeResult | undefined;
};

/** The fields of Claude Code's printed result that tests read; it prints many more. */
export type ClaudeCodeResult = {
  type: "result";
  subtype: string;
  is_error: boolean;
  result: string;
  stop_reason: string | null;
  api_error_status: number | null;
  num_turns: number;
  usage: { input_tokens: number; output_tokens: number };
  modelUsage: Record<string, { inputTokens: number; outputTokens: number }>;
};

export type CodexRun = AgentRun & {
  /** Every JSONL event `codex exec --json` printed (`thread.started`, `item.completed`, `turn.completed`, ...). */
  events: CodexEvent[];
  /** The text of the last `agent_message` item, when there was one. */
  answer: string | undefined;
  /** The usage `turn.completed` states (Codex takes it from `response.completed`), when the turn completed. */
  usage: { input_tokens: number; output_tokens: number } | undefined;
  /** The message of `turn.failed`, when the turn failed. */
  failure: string | undefined;
};

export type CodexEvent = {
  type: string;
  item?: { type: string; text?: string; message?: string };
  usage?: { input_tokens: number; output_tokens: number };
  error?: { message: string };
  message?: string;
};

type Common = {
  model: string;
  prompt: string;
  /** The agent's working directory; a fresh empty one by default (a repository's CLAUDE.md or AGENTS.md would go
   * into the prompt). */
  cwd?: string;
  /** Killed after this long; default 45 s (under the e2e test timeout, so a hung agent fails with its output). */
  timeoutMs?: number;
  /** PNG images attached to the prompt, as a person attaches a screenshot. */
  images?: Buffer[];
};

/**
 * `claude -p <prompt> --output-format json --model <model>` with `ANTHROPIC_BASE_URL` = `baseUrl` (the origin: Claude
 * Code posts to `<baseUrl>/v1/messages?beta=true`) and `ANTHROPIC_AUTH_TOKEN` = `authToken` (sent as
 * `Authorization: Bearer`). No retries and no non-streaming second try unless asked: a failed call is one request.
 */
export async function runClaudeCode(
  options: Common & {
    baseUrl: string;
    authToken: string;
    /** CLAUDE_CODE_MAX_RETRIES; default 0 (Claude Code's own default retries 5xx/429 with backoff). */
    maxRetries?: number;
    /** Claude Code repeats a call whose stream fails or ends without `message_stop` as a non-streaming call; off by
     * default here (CLAUDE_CODE_DISABLE_NONSTREAMING_FALLBACK=1). */
    nonStreamingFallback?: boolean;
  },
): Promise<ClaudeCodeRun> {
  return withTempHome("paysvc-claude-code-", async (home) => {
    const env: Record<string, string> = {
      ...baseEnv(home),
      CLAUDE_CONFIG_DIR: join(home, ".claude"),
      ANTHROPIC_BASE_URL: options.baseUrl,
      ANTHROPIC_AUTH_TOKEN: options.authToken,
      // Turns off telemetry, error reports, auto-update, release notes, model capability look-ups and the
      // connectivity probe (HEAD <baseUrl>/api/hello, and DNS look-ups of api.anthropic.com): one request remains.
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_AUTOUPDATER: "1",
      DISABLE_TELEMETRY: "1",
      DISABLE_ERROR_REPORTING: "1",
      CLAUDE_CODE_MAX_RETRIES: String(options.maxRetries ?? 0),
      ...(options.nonStreamingFallback ? {} : { CLAUDE_CODE_DISABLE_NONSTREAMING_FALLBACK: "1" }),
    };
    const cwd = options.cwd ?? workDir(home);
    if (!options.images?.length) {
      const args = ["-p", options.prompt, "--output-format", "json", "--model", options.model];
      const run = await runProcess(CLAUDE_BIN, args, { env, cwd, timeoutMs: options.timeoutMs });
      return { ...run, json: parseJson(run.stdout.trim()) as ClaudeCodeResult | undefined };
    }
    // Images go in as a pasted image does: image blocks of the user's message, read from stream-json input.
    const message = {
      type: "user",
      message: {
        role: "user",
        content: [
          { type: "text", text: options.prompt },
          ...options.images.map((png) => ({
            type: "image",
            source: { type: "base64", media_type: "image/png", data: png.toString("base64") },
          })),
        ],
      },
    };
    const args = ["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"];
    args.push("--model", options.model);
    const run = await runProcess(CLAUDE_BIN, args, {
      env,
      cwd,
      timeoutMs: options.timeoutMs,
      input: `${JSON.stringify(message)}\n`,
    });
    const lines = run.stdout.split("\n").map((line) => parseJson(line.trim()) as { type?: string } | undefined);
    return { ...run, json: lines.find((line) => line?.type === "result") as ClaudeCodeResult | undefined };
  });
}

/**
 * `codex exec --json -m <model> <prompt>` with a provider whose `base_url` is `baseUrl` (the API base, `.../v1`: Codex
 * posts to `<baseUrl>/responses`), `wire_api = "responses"` and the key in `PAYSVC_API_KEY` (sent as
 * `Authorization: Bearer`). No retries unless asked (Codex's own default is 4 request retries times 5 stream
 * reconnects: 30 requests for one failing turn).
 */
export async function runCodex(
  options: Common & {
    baseUrl: string;
    apiKey: string;
    /** request_max_retries and stream_max_retries of the provider; default 0. */
    maxRetries?: number;
  },
): Promise<CodexRun> {
  return withTempHome("paysvc-codex-", async (home) => {
    const codexHome = join(home, ".codex");
    mkdirSync(codexHome);
    writeFileSync(join(codexHome, "config.toml"), codexConfig(options.baseUrl, options.model, options.maxRetries ?? 0));
    const env = { ...baseEnv(home), CODEX_HOME: codexHome, [CODEX_KEY_ENV]: options.apiKey };
    const cwd = options.cwd ?? workDir(home);
    const args = [CODEX_LAUNCHER, "exec", "--skip-git-repo-check", "--ephemeral", "--json", "--color", "never"];
    options.images?.forEach((png, index) => {
      const file = join(home, `attached-${index}.png`);
      writeFileSync(file, png);
      args.push("-i", file);
    });
    args.push("-m", options.model, "-C", cwd, options.prompt);
    const run = await runProcess(process.execPath, args, { env, cwd, timeoutMs: options.timeoutMs });
    const events = run.stdout
      .split("\n")
      .map((line) => parseJson(line.trim()) as CodexEvent | undefined)
      .filter((event): event is CodexEvent => event !== undefined);
    const messages = events.filter((event) => event.type === "item.completed" && event.item?.type === "agent_message");
    return {
      ...run,
      events,
      answer: messages.at(-1)?.item?.text,
      usage: events.find((event) => event.type === "turn.completed")?.usage,
      failure: events.find((event) => event.type === "turn.failed")?.error?.message,
    };
  });
}

/**
 * The whole CODEX_HOME/config.toml. `[features] plugins = false` stops the plugin catalog sync (chatgpt.com,
 * github.com, api.github.com) and `[analytics] enabled = false` the analytics (ab.chatgpt.com); the update check is
 * off too. Without them Codex still answers, but looks those hosts up first.
 */
export function codexConfig(baseUrl: string, model: string, maxRetries: number) {
  return [
    `model = ${JSON.stringify(model)}`,
    `model_provider = "paysvc"`,
    `check_for_update_on_startup = false`,
    ``,
    `[analytics]`,
    `enabled = false`,
    ``,
    `[features]`,
    `plugins = false`,
    ``,
    `[model_providers.paysvc]`,
    `name = "paysvc"`,
    `base_url = ${JSON.stringify(baseUrl)}`,
    `env_key = ${JSON.stringify(CODEX_KEY_ENV)}`,
    `wire_api = "responses"`,
    `request_max_retries = ${maxRetries}`,
    `stream_max_retries = ${maxRetries}`,
    ``,
  ].join("\n");
}

/** PATH and a HOME and TMPDIR inside the run's temporary directory (Claude Code leaves probe directories in TMPDIR). */
function baseEnv(home: string): Record<string, string> {
  const tmp = join(home, "tmp");
  mkdirSync(tmp, { recursive: true });
  return { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, TMPDIR: tmp, LANG: "C.UTF-8" };
}

function workDir(home: string) {
  const dir = join(home, "work");
  mkdirSync(dir, { recursive: true });
  return dir;
}

async function withTempHome<T>(prefix: string, body: (home: string) => Promise<T>): Promise<T> {
  const home = mkdtempSync(join(tmpdir(), prefix));
  try {
    return await body(home);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/** Runs a command with no stdin, collecting its output, killed (and its exit code null) after `timeoutMs`. */
function runProcess(
  command: string,
  args: string[],
  options: { env: Record<string, string>; cwd: string; timeoutMs?: number; input?: string },
): Promise<AgentRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: options.env as NodeJS.ProcessEnv,
      cwd: options.cwd,
      stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    });
    if (options.input !== undefined) child.stdin!.end(options.input);
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, options.timeoutMs ?? 45_000);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (exitCode) => {
      clearTimeout(timer);
      resolve({ exitCode, stdout, stderr, timedOut });
    });
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

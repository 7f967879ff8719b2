import { existsSync, statSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { newestSourceTime } from "../build.mjs";
import { APP_SERVER, BUILD_OUTPUTS, buildExists } from "../lib/app-build";
import { PROJECT_ROOT } from "../lib/project-root";
import { startGuardedProcess, type GuardedProcess } from "./guarded-process";
import { waitFor } from "./wait-for";

/** The longest an app is let drain before it is killed: beyond any grace and settlement configured in practice. */
const APP_DRAIN_LIMIT_MS = 15 * 60_000;
const SOURCE_ROOTS = ["app", "server", "config", "networks"];
const SOURCE_FILES = ["next.config.ts", "package.json", "tsconfig.json"];

/** True when there is no production build, or a source file changed after it was made. */
export function buildIsStale(): boolean {
  if (!buildExists()) return true;
  const built = Math.min(...BUILD_OUTPUTS.map((path) => statSync(path).mtimeMs));
  const sources = [...SOURCE_ROOTS, ...SOURCE_FILES]
    .map((entry) => join(PROJECT_ROOT, entry))
    .filter((path) => existsSync(path));
  return sources.some((path) => newestSourceTime(path) > built);
}

/** The build under way in this process: stacks starting at once wait for one build (Next.js allows one at a time). */
let building: Promise<void> | undefined;

/** `npm run build`: the server module (dist/server.mjs), then the framework's production build. */
export function buildNextApp(): Promise<void> {
  building ??= runBuild().finally(() => (building = undefined));
  return building;
}

async function runBuild(): Promise<void> {
  const build = startGuardedProcess("npm", ["run", "--silent", "build"], { output: "pipe", cwd: PROJECT_ROOT });
  const output: string[] = [];
  for (const stream of [build.child.stdout, build.child.stderr])
    stream?.on("data", (chunk: Buffer) => output.push(chunk.toString()));
  const code = await build.exited;
  if (code !== 0) throw new Error(`the build failed (exit ${code}):\n${output.join("").slice(-4000)}`);
}

/** A port that was free a moment ago, for pieces that must know their port before they start. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

/**
 * Runs the production app server (app/serve.mjs) under a guard and waits until it answers HTTP.
 */
export async function startNextApp(options: {
  host: string;
  port: number;
  env: Record<string, string>;
  onLogLine?: (line: string) => void;
}): Promise<GuardedProcess & { url: string }> {
  const where = ["--port", String(options.port), "--hostname", options.host];
  const app = startGuardedProcess(process.execPath, [APP_SERVER, ...where], {
    output: "pipe",
    cwd: PROJECT_ROOT,
    env: options.env as NodeJS.ProcessEnv,
    // The app drains on SIGTERM (SHUTDOWN_GRACE_SECONDS, then its settlements) and exits by itself.
    graceMs: APP_DRAIN_LIMIT_MS,
  });
  const tail: string[] = [];
  for (const stream of [app.child.stdout, app.child.stderr]) {
    if (!stream) continue;
    createInterface({ input: stream }).on("line", (line) => {
      tail.push(line);
      if (tail.length > 40) tail.shift();
      options.onLogLine?.(line);
    });
  }
  const host = options.host === "0.0.0.0" || options.host === "::" ? "127.0.0.1" : options.host;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${options.port}`;
  let exitCode: number | null | undefined;
  void app.exited.then((code) => (exitCode = code));
  await waitFor(
    async () => {
      if (exitCode !== undefined)
        throw new Error(`the Next.js app exited at start (code ${exitCode}):\n${tail.join("\n")}`);
      return fetch(`${url}/health`, { signal: AbortSignal.timeout(5000) }).then(
        (response) => response.body?.cancel().then(() => true) ?? true,
        () => false,
      );
    },
    { timeoutMs: 60_000, intervalMs: 100, what: `the Next.js app at ${url}` },
  );
  return { ...app, url };
}

/**
 * startNextApp on a free port: picked just before the start, and picked again (up to three times) in the rare case
 * that another process took it in between.
 */
export async function startNextAppOnFreePort(
  options: Omit<Parameters<typeof startNextApp>[0], "port">,
): Promise<GuardedProcess & { url: string }> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startNextApp({ ...options, port: await freePort() });
    } catch (error) {
      if (attempt >= 3 || !/EADDRINUSE/.test(String(error))) throw error;
    }
  }
}

import { startGuardedProcess } from "../../cli/dev-stack/guarded-process";
import { freePort } from "../../cli/dev-stack/next-app";
import { waitFor } from "../../cli/dev-stack/wait-for";
import { environmentOfServer } from "./process-memory";

/**
 * A second app server, started now with the environment of the stack's own (the same database, chain, facilitator
 * and upstream) and `env` over it, for what only a fresh process shows (the first large quote after start) or another
 * setting changes.
 */
export async function startFreshApp(
  stackAppUrl: string,
  env: Record<string, string> = {},
): Promise<{ url: string; stop(): Promise<void> }> {
  const port = await freePort();
  const app = startGuardedProcess(
    process.execPath,
    ["app/serve.mjs", "--port", String(port), "--hostname", "127.0.0.1"],
    { output: "ignore", env: { ...environmentOfServer(stackAppUrl), ...env, PORT: String(port) } },
  );
  const url = `http://127.0.0.1:${port}`;
  await waitFor(async () => (await fetch(`${url}/v1/models`).catch(() => undefined))?.ok === true, {
    timeoutMs: 60_000,
    what: "a fresh app server",
  });
  return { url, stop: () => app.stop() };
}

import { spawn, type ChildProcess } from "node:child_process";
import { waitFor } from "../../cli/dev-stack/wait-for";

/** `paysvc start` as a long-running service, ready once its /health answers. */
export async function startService(
  env: Record<string, string>,
): Promise<{ child: ChildProcess; url: string; log: string[]; exited: Promise<number | null> }> {
  const log: string[] = [];
  const child = spawn(process.execPath, ["cli/bin.mjs", "start"], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  for (const stream of [child.stdout, child.stderr]) stream?.on("data", (chunk: Buffer) => log.push(chunk.toString()));
  const url = `http://127.0.0.1:${env.PORT}`;
  await waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`paysvc start exited ${child.exitCode}:\n${log.join("")}`);
      return fetch(`${url}/health`).then(
        (response) => response.ok,
        () => false,
      );
    },
    { timeoutMs: 60_000, intervalMs: 100, what: "paysvc start" },
  );
  return { child, url, log, exited };
}

/** SIGTERM, as a deploy sends it; resolves with the exit code once the service has drained and exited. */
export async function stopService(service: { child: ChildProcess; exited: Promise<number | null> }) {
  service.child.kill("SIGTERM");
  return service.exited;
}

import { spawn, type ChildProcess } from "node:child_process";
import { packageFile } from "../lib/project-root";

const guardScript = packageFile("cli", "dev-stack", "child-guard.cjs");

export interface GuardedProcess {
  child: ChildProcess;
  /** Resolves once the process has exited, whatever the reason. */
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

/**
 * Starts a long-running child that cannot outlive this process: it runs under child-guard.cjs, which ends it
 * when our end of its stdin pipe closes. Output is passed on or dropped as asked; never inherited, so a stray
 * child never holds the terminal's pipe open.
 */
export function startGuardedProcess(
  command: string,
  args: string[],
  /** `uid`/`gid`: the command runs as that user (the guard stays ours). */
  options: {
    env?: NodeJS.ProcessEnv;
    cwd?: string;
    output: "pipe" | "ignore";
    uid?: number;
    gid?: number;
    /** How long it may take to exit once stopped before it is killed (5 s unless told). */
    graceMs?: number;
  },
): GuardedProcess {
  const as = options.uid === undefined ? [] : ["--as", `${options.uid}:${options.gid ?? options.uid}`];
  const grace = options.graceMs === undefined ? [] : ["--grace", String(options.graceMs)];
  const child = spawn(process.execPath, [guardScript, ...as, ...grace, command, ...args], {
    stdio: ["pipe", options.output, options.output],
    env: options.env,
    cwd: options.cwd,
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  liveChildren.add(child);
  void exited.then(() => liveChildren.delete(child));
  return {
    child,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

const liveChildren = new Set<ChildProcess>();

// A crash skips every asynchronous cleanup; this synchronous hook still ends the children (their guards would
// also notice the closed pipe, this is just faster).
process.once("exit", () => {
  for (const child of liveChildren) child.kill("SIGTERM");
});

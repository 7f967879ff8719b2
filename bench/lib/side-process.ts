import { createInterface } from "node:readline";
import { startGuardedProcess, type GuardedProcess } from "../../cli/dev-stack/guarded-process";

/**
 * Runs a TypeScript script of the benchmark in a process of its own and resolves with the first line it prints
 * (its URL) once it is up. The development upstream and the facilitator run this way, as real ones would: in the
 * benchmark's own process their work would delay the client's event loop and its measurements.
 */
export async function startSideProcess(
  script: string,
  args: string[],
): Promise<{ process: GuardedProcess; firstLine: string }> {
  const process_ = startGuardedProcess(process.execPath, ["--import", "tsx", script, ...args], { output: "pipe" });
  const firstLine = await new Promise<string>((resolve, reject) => {
    createInterface({ input: process_.child.stdout! }).once("line", resolve);
    void process_.exited.then((code) => reject(new Error(`${script} exited (code ${code})`)));
  });
  return { process: process_, firstLine };
}

import { readFileSync } from "node:fs";

/** Linux reports CPU times in clock ticks of 1/100 s (USER_HZ, fixed for user space). */
const TICK_MS = 10;

/** CPU time (user + system) a process has used so far, in ms; resolution one tick, so measure many requests. */
export function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

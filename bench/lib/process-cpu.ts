import { readFileSync } from "node:fs";

/** Linux reports CPU times in clock ticks of 1/100 s (USER_HZ, fixed for user space). */
const TICK_MS = 10;

/** CPU time (user + system) a process has used so far, in ms; resolution one tick, so measure many requests. */
export function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

/** The machine's CPU time so far, all cores, in ticks: busy (anything but idle and I/O wait) and in all. */
export function machineCpuTicks(): { busy: number; total: number } {
  const [, ...fields] = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/);
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = fields.map(Number);
  const busy = user + nice + system + irq + softirq + steal;
  return { busy, total: busy + idle + iowait };
}

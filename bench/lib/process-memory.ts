import { readFileSync, readdirSync, readlinkSync } from "node:fs";

/** The pid of the process listening on a TCP port (Linux /proc), to read the app server's memory. */
export function pidListeningOn(port: number): number | undefined {
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0");
  const inodes = new Set<string>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    for (const line of readFileSync(table, "utf8").split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields[1]?.endsWith(`:${hexPort}`) && fields[3] === "0A") inodes.add(fields[9] ?? "");
    }
  }
  for (const pid of readdirSync("/proc").filter((entry) => /^\d+$/.test(entry))) {
    try {
      for (const fd of readdirSync(`/proc/${pid}/fd`)) {
        const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
        if (inode && inodes.has(inode)) return Number(pid);
      }
    } catch {
      // processes come and go
    }
  }
  return undefined;
}

/** Resident memory of a process in MB. */
export function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((entry) => entry.startsWith("VmRSS:"));
  return Number(line?.split(/\s+/)[1] ?? 0) / 1024;
}

/**
 * The environment of the process listening on `url`'s port (Linux /proc): a second app server started with it runs
 * as the stack's own does.
 */
export function environmentOfServer(url: string): NodeJS.ProcessEnv {
  const pid = pidListeningOn(Number(new URL(url).port));
  if (pid === undefined) throw new Error(`no process listens at ${url}`);
  return Object.fromEntries(
    readFileSync(`/proc/${pid}/environ`, "utf8")
      .split("\0")
      .filter(Boolean)
      .map((entry) => [entry.slice(0, entry.indexOf("=")), entry.slice(entry.indexOf("=") + 1)]),
  ) as NodeJS.ProcessEnv;
}

// Runs one command and ends it when the process that started this guard goes away, even when that process was
// killed with SIGKILL and could not clean up: the guard's stdin is a pipe from its parent, and the pipe closes
// when the parent dies. Usage: node child-guard.cjs [--as <uid>:<gid>] <command> [args...]
"use strict";
const { spawn } = require("node:child_process");

// `--as <uid>:<gid>` first: the command runs as that user (the guard itself stays who it is).
const as = process.argv[2] === "--as" ? process.argv[3].split(":").map(Number) : undefined;
const user = as ? { uid: as[0], gid: as[1] } : {};
const [command, ...args] = process.argv.slice(as ? 4 : 2);
if (!command) {
  process.stderr.write("child-guard: no command given\n");
  process.exit(2);
}

const child = spawn(command, args, { stdio: ["ignore", "inherit", "inherit"], ...user });
let stopping = false;

function stop(signal) {
  if (stopping || child.exitCode !== null || child.signalCode !== null) return;
  stopping = true;
  child.kill(signal);
  // A child that ignores the polite signal is killed outright.
  setTimeout(() => child.kill("SIGKILL"), 5000).unref();
}

process.stdin.on("end", () => stop("SIGTERM"));
process.stdin.on("error", () => stop("SIGTERM"));
process.stdin.resume();
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => stop(signal));

child.on("error", (error) => {
  process.stderr.write(`child-guard: cannot start ${command}: ${error.message}\n`);
  process.exit(127);
});
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 128 : 0)));

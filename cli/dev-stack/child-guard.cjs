// Runs one command and ends it when the process that started this guard goes away, even when that process was
// killed with SIGKILL and could not clean up: the guard's stdin is a pipe from its parent, and the pipe closes
// when the parent dies. Usage: node child-guard.cjs [--as <uid>:<gid>] [--grace <ms>] <command> [args...]
"use strict";
const { spawn } = require("node:child_process");

const argv = process.argv.slice(2);
/** The value of a leading `--name <value>` option, taken off the arguments. */
function option(name) {
  if (argv[0] !== name) return undefined;
  const value = argv[1];
  argv.splice(0, 2);
  return value;
}
// `--as <uid>:<gid>`: the command runs as that user (the guard itself stays who it is).
const as = option("--as")?.split(":").map(Number);
// `--grace <ms>`: how long a stopped command may take to exit (an app draining its requests) before SIGKILL.
const graceMs = Number(option("--grace") ?? 5000);
const user = as ? { uid: as[0], gid: as[1] } : {};
const [command, ...args] = argv;
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
  // A child that ignores the polite signal, or outlasts its grace, is killed outright.
  setTimeout(() => child.kill("SIGKILL"), graceMs).unref();
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

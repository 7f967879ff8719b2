import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";

/** Runs `code` in a fresh Node process with logEvent imported; returns what it wrote. */
function run(code: string): { stdout: string; stderr: string } {
  const script = `import { logEvent } from ${JSON.stringify(new URL("./log.ts", import.meta.url).href)};\n${code}`;
  const child = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    encoding: "utf8",
  });
  expect(child.status).toBe(0);
  return { stdout: child.stdout, stderr: child.stderr };
}

const events = (output: string) =>
  output
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line).event);

describe("logEvent", () => {
  it("writes each event as a JSON line, in order, after the current work: info on stdout, errors on stderr", () => {
    const { stdout, stderr } = run(`
      logEvent("info", "first", { n: 1 });
      logEvent("error", "broken");
      process.stdout.write(JSON.stringify({ event: "written before the logged lines" }) + "\\n");
      logEvent("warn", "second");`);
    expect(events(stdout)).toEqual(["written before the logged lines", "first", "second"]);
    expect(events(stderr)).toEqual(["broken"]);
    expect(JSON.parse(stdout.split("\n")[1]!)).toMatchObject({ level: "info", event: "first", n: 1 });
  });

  it("still writes the lines logged just before the process exits", () => {
    const { stdout } = run(`logEvent("info", "last words"); process.exit(0);`);
    expect(events(stdout)).toEqual(["last words"]);
  });
});

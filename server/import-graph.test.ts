import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(__dirname, "..");
const SOURCE_ROOTS = ["app", "cli", "config", "networks", "server"];

function sourceFiles(directory: string): string[] {
  return readdirSync(directory).flatMap((entry) => {
    const path = join(directory, entry);
    if (statSync(path).isDirectory()) return entry === "node_modules" ? [] : sourceFiles(path);
    return /\.(ts|tsx|mjs)$/.test(entry) && !/\.test\.ts$/.test(entry) ? [path] : [];
  });
}

/**
 * Relative imports, types included: a cycle of types alone loads nothing twice, but it ties modules together as
 * surely, and it is how a runtime cycle starts.
 */
function imports(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const specifiers = [...text.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+"(\.[^"]+)"/gms)].map((match) => match[1]!);
  return specifiers.flatMap((specifier) => {
    const base = resolve(dirname(file), specifier);
    const found = ["", ".ts", ".tsx", ".mjs", "/index.ts"].map((suffix) => base + suffix).find(isFile);
    return found ? [found] : [];
  });
}

const isFile = (path: string) => existsSync(path) && statSync(path).isFile();

/** Every cycle's files, found by a depth-first walk (each cycle once, as first met). */
function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (file: string) => {
    state.set(file, "open");
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === "open") found.push(stack.slice(stack.indexOf(next)).map((path) => relative(root, path)));
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, "done");
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return found;
}

describe("the source tree", () => {
  const files = SOURCE_ROOTS.flatMap((folder) => sourceFiles(join(root, folder)));

  it("has no import cycle", () => {
    const graph = new Map(files.map((file) => [file, imports(file)]));
    expect(cycles(graph)).toEqual([]);
  });

  it("finds a cycle when there is one (the check itself)", () => {
    expect(
      cycles(
        new Map([
          ["a", ["b"]],
          ["b", ["c"]],
          ["c", ["a"]],
          ["d", ["a"]],
        ]),
      ).length,
    ).toBe(1);
  });

  it("keeps every file in server/ at 300 lines or fewer", () => {
    const long = files
      .filter((file) => relative(root, file).startsWith("server"))
      .map((file) => [relative(root, file), readFileSync(file, "utf8").split("\n").length] as const)
      .filter(([, lines]) => lines > 300);
    expect(long).toEqual([]);
  });
});

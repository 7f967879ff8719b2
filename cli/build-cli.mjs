// The CLI's compiled form, dist/cli/ (esbuild, as the server's is dist/server.mjs): `npm run build` makes it, and
// cli/bin.mjs makes it again whenever a source is newer. Loading the TypeScript through a loader hook instead cost
// every command about twice the CPU of its start. Plain JavaScript, so that bin.mjs can run it before any build.
//   node cli/build-cli.mjs
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const OUT_DIR = join(root, "dist", "cli");
/** The compiled cli/index.ts: it exports `main(callerDirectory)`. */
export const CLI_ENTRY = join(OUT_DIR, "index.js");
/** What the compiled CLI is made of (packages stay outside it, loaded from node_modules as they are). */
const SOURCES = ["cli", "server", "config", "networks", "package.json", "tsconfig.json"];

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
      entryPoints: [join(root, "cli", "index.ts")],
      bundle: true,
      // The development stack stays a chunk of its own, loaded by `paysvc dev` alone, as its dynamic import says.
      splitting: true,
      format: "esm",
      platform: "node",
      packages: "external",
      target: "node20",
      sourcemap: true,
      logLevel: "warning",
      outdir: staging,
    });
    mkdirSync(OUT_DIR, { recursive: true });
    const files = readdirSync(staging).sort((a, b) => Number(a.startsWith("index.")) - Number(b.startsWith("index.")));
    for (const file of files) renameSync(join(staging, file), join(OUT_DIR, file));
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildCli({ clean: true });

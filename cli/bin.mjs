#!/usr/bin/env node
// Entry point of the `paysvc` command: loads the TypeScript CLI through tsx, from the project root.
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { register } from "tsx/esm/api";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
// Paths the user passes (--body, --out, --config-dir, and PAYSVC_CATALOG, DATABASE_URL, DATA_DIR) are relative to
// where they ran the command: recorded before the move below and resolved through cli/lib/caller-directory.ts.
const callerDirectory = process.cwd();
// The project root is the working directory that tsx reads tsconfig.json from and that the embedded stack
// (`paysvc dev`) finds its build, migrations and default data folder in.
process.chdir(root);
register();
const { setCallerDirectory } = await import(pathToFileURL(join(root, "cli", "lib", "caller-directory.ts")).href);
setCallerDirectory(callerDirectory);
await import(pathToFileURL(join(root, "cli", "index.ts")).href);

#!/usr/bin/env node
// Entry point of the `paysvc` command: runs the CLI's compiled form (cli/build.mjs), compiled first when it is
// missing or older than a source, from the project root.
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { buildCli, CLI_ENTRY, cliBuildIsStale } from "./build.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
// Paths the user passes (--body, --out, --config-dir, and PAYSVC_CATALOG, DATABASE_URL, DATA_DIR) are relative to
// where they ran the command: recorded before the move below and handed to the CLI (cli/lib/caller-directory.ts).
const callerDirectory = process.cwd();
// The project root is the working directory the CLI finds its build, migrations, the app server and the default
// data folder from.
process.chdir(root);
if (cliBuildIsStale()) await buildCli();
const { main } = await import(pathToFileURL(CLI_ENTRY).href);
await main(callerDirectory);

#!/usr/bin/env node
// Entry point of the `paysvc` command: loads the TypeScript CLI through tsx, from the project root.
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { register } from "tsx/esm/api";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
process.chdir(root);
register();
await import(pathToFileURL(join(root, "cli", "index.ts")).href);

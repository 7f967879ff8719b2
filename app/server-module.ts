import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type * as ServerModule from "../server/index";

/**
 * The compiled server (dist/server.mjs), loaded at run time and never bundled: the console's pages and
 * app/serve.mjs then share one instance of it per process, and with it one AppContext.
 */
const serverUrl = pathToFileURL(join(process.cwd(), "dist", "server.mjs")).href;

export function serverModule(): Promise<typeof ServerModule> {
  return import(/* webpackIgnore: true */ /* turbopackIgnore: true */ serverUrl);
}

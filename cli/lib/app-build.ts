import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The production HTTP server of the app (`node app/serve.mjs --port <port> --hostname <host>`). */
export const APP_SERVER = fileURLToPath(new URL("../../app/serve.mjs", import.meta.url));

/** What `npm run build` makes: the server module and the framework's build; both must be there to serve. */
export const BUILD_OUTPUTS = [
  fileURLToPath(new URL("../../dist/server.mjs", import.meta.url)),
  fileURLToPath(new URL("../../.next/BUILD_ID", import.meta.url)),
];

export function buildExists(): boolean {
  return BUILD_OUTPUTS.every((path) => existsSync(path));
}

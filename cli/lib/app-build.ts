import { existsSync } from "node:fs";
import { packageFile } from "./project-root";

/** The production HTTP server of the app (`node app/serve.mjs --port <port> --hostname <host>`). */
export const APP_SERVER = packageFile("app", "serve.mjs");

/** What `npm run build` makes: the server module and the framework's build; both must be there to serve. */
export const BUILD_OUTPUTS = [packageFile("dist", "server.mjs"), packageFile(".next", "BUILD_ID")];

export function buildExists(): boolean {
  return BUILD_OUTPUTS.every((path) => existsSync(path));
}

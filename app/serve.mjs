// The app's one HTTP server (what `paysvc start` and `paysvc dev` run): a plain Node server. Every API endpoint is
// answered here by the compiled server module (dist/server.mjs), without the framework's per-request work (about
// 2 ms of every request); the console's pages go to Next.js, whose pages load the same module instance, so the
// process has one AppContext. `next start` alone serves only the console, and it cannot show it: nothing would
// have started the AppContext. Usage:
//   node app/serve.mjs --port 3000 --hostname 127.0.0.1
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import next from "next";
import { createHttpServer, createNodeHandler, shutDown, startAppContext } from "../dist/server.mjs";

const { values } = parseArgs({ options: { port: { type: "string" }, hostname: { type: "string" } } });
const port = Number(values.port ?? 3000);
const hostname = values.hostname ?? "127.0.0.1";

// The database is reached and migrated before anything listens: a wrong DATABASE_URL or an unreachable server is
// one clear line and exit code 1, not a failure on the first request.
try {
  await startAppContext();
} catch (error) {
  console.error(`paysvc app cannot start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}

const app = next({ dev: false, dir: process.cwd(), hostname, port });
const handle = app.getRequestHandler();
await app.prepare();

// The origin the framework puts in request.url; handlers that need the caller's view use Host or PUBLIC_BASE_URL.
const origin = `http://${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}`;
// The framework's paths: the console's pages, as its build lists them, and its own files under /_next/. Every
// other path is the API's, answered by the server module (a JSON 404 for one that is no endpoint's).
const pages = new Set(
  Object.values(JSON.parse(readFileSync(join(process.cwd(), ".next", "app-path-routes-manifest.json"), "utf8"))),
);
const answerDirectly = createNodeHandler(origin, (path) => pages.has(path) || path.startsWith("/_next/"));

// Bounded in connections, per address and in all, and in how long a request may take to arrive (the settings).
const server = createHttpServer((request, response) => {
  if (!answerDirectly(request, response)) handle(request, response);
});
server.keepAliveTimeout = 65_000;
server.listen(port, hostname, () => console.log(`paysvc app listening on http://${hostname}:${port}`));

// A deploy's SIGTERM (or Ctrl-C) drains: what is under way finishes and is billed, new requests are refused, then
// the process exits 0. A second signal does not cut the drain short; SIGKILL does (leases and reconciliation cover
// what it leaves).
let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    if (stopping) return void console.log(`paysvc app: ${signal} again: still draining (SIGKILL stops at once)`);
    stopping = true;
    shutDown(server).then(
      () => process.exit(0),
      (error) => {
        console.error(`paysvc app: the drain failed: ${error instanceof Error ? error.stack : String(error)}`);
        process.exit(1);
      },
    );
  });
}

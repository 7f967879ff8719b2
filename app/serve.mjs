// The production HTTP server of the app: Next.js behind a plain Node server, so that route handlers learn the
// address of the socket a request came from (Next gives them only headers). The address is written into
// x-paysvc-peer-address, replacing any value a client sent under that name. Every API endpoint
// (server/http/direct-routes.ts) is answered here by the same framework-free handlers the route files in app/
// call, without the framework's per-request work; the console's pages (and other methods) go to Next.js. Usage:
//   node app/serve.mjs --port 3000 --hostname 127.0.0.1
import { createServer } from "node:http";
import { parseArgs } from "node:util";
import next from "next";
import { tsImport } from "tsx/esm/api";

export const PEER_ADDRESS_HEADER = "x-paysvc-peer-address";

const { values } = parseArgs({ options: { port: { type: "string" }, hostname: { type: "string" } } });
const port = Number(values.port ?? 3000);
const hostname = values.hostname ?? "127.0.0.1";

const app = next({ dev: false, dir: process.cwd(), hostname, port });
const handle = app.getRequestHandler();
// Loaded through tsx in its own namespace, so that Next's own module loading is left alone.
const { directRoute } = await tsImport("../server/http/direct-routes.ts", import.meta.url);
await app.prepare();

// The origin the framework puts in request.url; handlers that need the caller's view use Host or PUBLIC_BASE_URL.
const origin = `http://${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}`;

const server = createServer((request, response) => {
  request.headers[PEER_ADDRESS_HEADER] = request.socket.remoteAddress ?? "";
  const direct = directRoute(request.method, request.url, origin);
  if (direct) direct(request, response);
  else handle(request, response);
});
server.keepAliveTimeout = 65_000;
server.listen(port, hostname, () => console.log(`paysvc app listening on http://${hostname}:${port}`));

for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
    setTimeout(() => process.exit(0), 5000).unref();
  });
}

// A bare reverse proxy to the development upstream, for the benchmark's floor: what any Node.js proxy costs on this
// machine, with none of the gateway's work (no parsing, no billing, no database, no validation). `node --import tsx
// bench/lib/bare-proxy-process.ts <upstream base URL>` prints the base URL to call it with once it listens. It
// uses the same pieces as the gateway (Node's HTTP server, an undici keep-alive pool) and sends a whole answer
// in one write with its length, as the gateway does; an event stream is passed on chunk by chunk.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent } from "undici";

const upstream = new URL(process.argv[2]!);
const agent = new Agent({ keepAliveTimeout: 30_000, connections: 256 });

const server = createServer((request, response) => {
  const body: Buffer[] = [];
  request.on("data", (chunk: Buffer) => body.push(chunk));
  request.on("end", () => {
    const answer: Buffer[] = [];
    let status = 502;
    let contentType = "application/octet-stream";
    let streaming = false;
    agent.dispatch(
      {
        origin: upstream.origin,
        path: request.url ?? "/",
        method: request.method === "GET" ? "GET" : "POST",
        headers: { "content-type": request.headers["content-type"] ?? "application/json" },
        body: body.length > 0 ? Buffer.concat(body) : undefined,
      },
      {
        onConnect() {},
        onHeaders(statusCode: number, rawHeaders: Buffer[]) {
          status = statusCode;
          for (let index = 0; index < rawHeaders.length; index += 2) {
            if (rawHeaders[index]!.toString().toLowerCase() === "content-type")
              contentType = rawHeaders[index + 1]!.toString();
          }
          streaming = contentType.startsWith("text/event-stream");
          if (streaming) response.writeHead(status, { "content-type": contentType });
          return true;
        },
        onData(chunk: Buffer) {
          if (streaming) response.write(chunk);
          else answer.push(chunk);
          return true;
        },
        onComplete() {
          if (streaming) {
            response.end();
            return;
          }
          const whole = Buffer.concat(answer);
          response.writeHead(status, { "content-type": contentType, "content-length": whole.length });
          response.end(whole);
        },
        onError(error: Error) {
          if (!response.headersSent) response.writeHead(502, { "content-type": "text/plain" });
          response.end(error.message);
        },
      },
    );
  });
});

server.listen(0, "127.0.0.1", () => {
  console.log(`http://127.0.0.1:${(server.address() as AddressInfo).port}${upstream.pathname}`);
});

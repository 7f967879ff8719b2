import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

/** A web app's page on an origin of its own: an HTML page whose script is cross-origin-page-script.ts. */
export interface CrossOriginPageServer {
  /** `http://127.0.0.1:<port>`: another origin than the app's, which differs by port. */
  origin: string;
  close(): Promise<void>;
}

/** The page's script bundled for the browser (the official x402 client, viem), built into a temp dir. */
export async function bundlePageScript(): Promise<string> {
  const directory = mkdtempSync(join(tmpdir(), "paysvc-cross-origin-"));
  try {
    const outfile = join(directory, "page.js");
    await build({
      entryPoints: [fileURLToPath(new URL("./cross-origin-page-script.ts", import.meta.url))],
      bundle: true,
      platform: "browser",
      format: "iife",
      target: "chrome120",
      outfile,
      logLevel: "warning",
    });
    return readFileSync(outfile, "utf8");
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

/** Serves the page at `/` and its script at `/page.js`, on a free port of 127.0.0.1. */
export async function servePage(script: string): Promise<CrossOriginPageServer> {
  const html = '<!doctype html><html><head><script src="/page.js"></script></head><body>web app</body></html>';
  const server: Server = createServer((request, response) => {
    if (request.url === "/page.js") response.writeHead(200, { "content-type": "text/javascript" }).end(script);
    else if (request.url === "/") response.writeHead(200, { "content-type": "text/html" }).end(html);
    else response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

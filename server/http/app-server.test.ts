import type { Server } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createAppServer } from "./app-server";

let server: Server | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

const limits = { total: 6, perAddress: 3, headersTimeoutMs: 600, requestTimeoutMs: 1_200 };

/** An app server answering every request "ok", bounded by `bounds`, listening on 127.0.0.1; its port. */
async function listen(bounds = limits, trusted: (address: string) => boolean = () => false): Promise<number> {
  server = createAppServer(bounds, trusted, (_request, response) => response.end("ok"));
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return (server.address() as AddressInfo).port;
}

/** A raw connection, and whether (and how soon) the server closed it. */
function open(port: number) {
  const socket = connect(port, "127.0.0.1");
  sockets.push(socket);
  socket.on("error", () => undefined);
  let received = "";
  socket.on("data", (chunk: Buffer) => (received += chunk.toString()));
  const started = performance.now();
  const closed = new Promise<number>((resolve) => socket.once("close", () => resolve(performance.now() - started)));
  const connected = new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  return { socket, closed, connected, received: () => received };
}

const stillOpen = (closed: Promise<number>, ms: number) =>
  Promise.race([closed.then(() => false), new Promise<boolean>((resolve) => setTimeout(() => resolve(true), ms))]);

describe("the app's HTTP server", () => {
  it("closes a connection beyond the per-address bound at once, and counts one closed as gone", async () => {
    const port = await listen();
    const first = [open(port), open(port), open(port)];
    await Promise.all(first.map((each) => each.connected));
    const extra = open(port);
    expect(await extra.closed).toBeLessThan(500);
    for (const each of first) expect(await stillOpen(each.closed, 100)).toBe(true);
    // One leaves: another may come.
    first[0]!.socket.destroy();
    await first[0]!.closed;
    const next = open(port);
    await next.connected;
    next.socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(next.received()).toMatch(/^HTTP\/1\.1 200/);
  });

  it("exempts a trusted proxy's connections from the per-address bound, not from the total", async () => {
    const port = await listen(limits, (address) => address === "127.0.0.1");
    const many = Array.from({ length: 6 }, () => open(port));
    await Promise.all(many.map((each) => each.connected));
    for (const each of many) expect(await stillOpen(each.closed, 50)).toBe(true);
    const seventh = open(port);
    expect(await seventh.closed).toBeLessThan(500);
  });

  it("answers 408 and closes a request whose headers do not arrive in time, and one whose body does not", async () => {
    const port = await listen();
    const half = open(port);
    half.socket.write("GET / HTTP/1.1\r\nHost: x\r\nX-Wait:");
    const headersClosed = await half.closed;
    expect(headersClosed).toBeGreaterThanOrEqual(limits.headersTimeoutMs - 50);
    expect(headersClosed).toBeLessThan(limits.headersTimeoutMs + 5_000);
    expect(half.received()).toMatch(/^HTTP\/1\.1 408/);
    const body = open(port);
    body.socket.write("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc");
    const bodyClosed = await body.closed;
    expect(bodyClosed).toBeGreaterThanOrEqual(limits.requestTimeoutMs - 50);
    expect(bodyClosed).toBeLessThan(limits.requestTimeoutMs + 5_000);
  });
});

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { ConnectionLimits } from "../../config/service-config";
import { normalizeAddress } from "./client-address";
import { callerGroup } from "../windows/caller-group";
import { CallerPlaces } from "../windows/caller-places";

/** How often Node looks for requests whose headers or body are late: often enough for the timeouts to hold. */
const TIMEOUT_CHECK_MS = 1_000;

/**
 * The app's HTTP server, bounded in what open connections can hold: at most `total` at once (Node closes any more
 * as they come), at most `perAddress` from one address (an IPv6 one by its /64; a trusted proxy's connections
 * carry many callers and are exempt), a request's headers within `headersTimeoutMs` and the whole of it within
 * `requestTimeoutMs` (Node answers 408 and closes). A connection over a bound is closed before anything is read.
 */
export function createAppServer(
  limits: ConnectionLimits,
  trusted: (address: string) => boolean,
  handle: (request: IncomingMessage, response: ServerResponse) => void,
): Server {
  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      connectionsCheckingInterval: TIMEOUT_CHECK_MS,
    },
    handle,
  );
  server.maxConnections = limits.total;
  const open = new CallerPlaces(limits.perAddress);
  server.on("connection", (socket: Socket) => {
    const address = normalizeAddress(socket.remoteAddress);
    if (address === undefined || trusted(address)) return;
    const release = open.take(callerGroup(address));
    if (!release) return void socket.destroy();
    socket.once("close", release);
  });
  return server;
}

import { Server, type IncomingMessage } from "node:http";
import { PEER_ADDRESS_HEADER } from "../free-tier/client-address";

let stamping = false;

/**
 * Makes every HTTP server of this process write the address of the socket a request came from into
 * x-paysvc-peer-address before anyone handles it, replacing any value a client sent under that name. Route
 * handlers see only headers (the framework hands them a Web Request), so this is how they learn who is calling,
 * under app/serve.mjs and under `next start` alike (instrumentation.ts calls this at start). Idempotent.
 */
export function stampPeerAddresses(): void {
  if (stamping) return;
  stamping = true;
  const emit = Server.prototype.emit;
  Server.prototype.emit = function (this: Server, event: string | symbol, ...args: unknown[]) {
    if (event === "request") {
      const request = args[0] as IncomingMessage;
      request.headers[PEER_ADDRESS_HEADER] = request.socket.remoteAddress ?? "";
    }
    return Reflect.apply(emit, this, [event, ...args]) as boolean;
  } as typeof emit;
}

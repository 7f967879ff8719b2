import { BlockList, isIP } from "node:net";
import { parseAddressRange } from "../../config/address-range";
import type { ForwardedHeader, TrustedProxies } from "../../config/env";
import type { ApiRequest } from "./api-request";

/** "::ffff:10.1.2.3" -> "10.1.2.3", "[2001:db8::1]:80" -> "2001:db8::1", "1.2.3.4:80" -> "1.2.3.4". */
export function normalizeAddress(value: string | undefined | null): string | undefined {
  if (!value) return undefined;
  let address = value.trim().replace(/^"|"$/g, "");
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(address);
  if (bracketed?.[1]) address = bracketed[1];
  else if (/^[\d.]+:\d+$/.test(address)) address = address.replace(/:\d+$/, "");
  if (address.toLowerCase().startsWith("::ffff:") && isIP(address.slice(7)) === 4) address = address.slice(7);
  return isIP(address) ? address.toLowerCase() : undefined;
}

/**
 * The hops a request passed, nearest last, from the one header the proxies are known to write. Never the other:
 * a proxy that appends to X-Forwarded-For passes a client's own `Forwarded` through untouched (and the reverse),
 * so preferring whichever is present would let a client name any address it likes.
 */
function forwardedHops(request: ApiRequest, header: ForwardedHeader): string[] {
  const value = request.headers.get(header) ?? "";
  if (header === "forwarded") {
    return value.split(",").map((element) => /(?:^|;)\s*for=("[^"]*"|[^;,\s]+)/i.exec(element)?.[1] ?? "");
  }
  return value.split(",").filter((hop) => hop.trim() !== "");
}

/**
 * Who a request comes from: the socket's address, unless that is a trusted proxy; then the nearest forwarded hop
 * that is not itself a trusted proxy. Headers from anyone else are ignored, so a client cannot mint a fresh
 * identity by sending X-Forwarded-For itself.
 */
export class ClientAddressResolver {
  private readonly trusted = new BlockList();
  private readonly header: ForwardedHeader;
  private readonly anyTrusted: boolean;

  constructor(trustedProxies: TrustedProxies) {
    this.header = trustedProxies.header;
    this.anyTrusted = trustedProxies.addresses.length > 0;
    for (const entry of trustedProxies.addresses) {
      const range = parseAddressRange(entry);
      if (range) this.trusted.addSubnet(range.address, range.prefix, range.family);
    }
  }

  /** Whether `address` is a trusted proxy's. */
  trusts(address: string): boolean {
    // Without trusted proxies (the default) nothing is: no BlockList lookup (it builds a SocketAddress each time).
    if (!this.anyTrusted) return false;
    return this.trusted.check(address, isIP(address) === 6 ? "ipv6" : "ipv4");
  }

  /** Whether the request's socket is a trusted proxy's (whose forwarded headers are believed). */
  fromTrustedProxy(request: ApiRequest): boolean {
    const peer = normalizeAddress(request.peerAddress);
    return peer !== undefined && this.trusts(peer);
  }

  /** The caller's address, or "unknown" for a request that came from no socket. */
  resolve(request: ApiRequest): string {
    const peer = normalizeAddress(request.peerAddress);
    if (!peer) return "unknown";
    if (!this.trusts(peer)) return peer;
    const hops = forwardedHops(request, this.header);
    for (let index = hops.length - 1; index >= 0; index--) {
      const hop = normalizeAddress(hops[index]);
      // A malformed hop ends what can be believed; the proxy before it is the best we know.
      if (!hop) return peer;
      if (!this.trusts(hop)) return hop;
    }
    return peer;
  }
}

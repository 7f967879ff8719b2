import { describe, expect, it } from "vitest";
import type { ApiRequest } from "./api-request";
import { ClientAddressResolver, normalizeAddress } from "./client-address";

/** A request from the socket address `peer`, with `headers`. */
const request = (peer: string, headers: Record<string, string> = {}): ApiRequest => ({
  method: "GET",
  url: "http://service.test/",
  headers: new Headers(headers),
  body: null,
  peerAddress: peer,
});
const PROXIES = ["10.0.0.0/8", "127.0.0.2"];

describe("ClientAddressResolver reading X-Forwarded-For (the default)", () => {
  const resolver = new ClientAddressResolver({ addresses: PROXIES, header: "x-forwarded-for" });

  it("uses the socket address and ignores forwarded headers from an untrusted peer", () => {
    expect(resolver.resolve(request("203.0.113.9", { "x-forwarded-for": "1.1.1.1" }))).toBe("203.0.113.9");
    expect(resolver.resolve(request("203.0.113.9", { forwarded: "for=1.1.1.1" }))).toBe("203.0.113.9");
    expect(resolver.resolve(request("::ffff:203.0.113.9"))).toBe("203.0.113.9");
  });

  it("believes a trusted proxy, taking the nearest hop that is not a trusted proxy", () => {
    const forwarded = { "x-forwarded-for": "6.6.6.6, 198.51.100.7, 10.2.2.2" };
    expect(resolver.resolve(request("10.1.1.1", forwarded))).toBe("198.51.100.7");
    expect(resolver.resolve(request("10.1.1.1", { "x-forwarded-for": "not-an-ip" }))).toBe("10.1.1.1");
    expect(resolver.resolve(request("10.1.1.1"))).toBe("10.1.1.1");
  });

  it("ignores a Forwarded header the client sent through a proxy that appends only to X-Forwarded-For", () => {
    // nginx with proxy_add_x_forwarded_for: the client's own Forwarded arrives untouched beside the real hop.
    for (const spoofed of ["203.0.113.77", "192.0.2.1", '"[2001:db8::99]"']) {
      const through = { "x-forwarded-for": "198.51.100.20", forwarded: `for=${spoofed}` };
      expect(resolver.resolve(request("127.0.0.2", through))).toBe("198.51.100.20");
    }
    // Without X-Forwarded-For there is nothing the proxy vouched for: the proxy itself is the caller.
    expect(resolver.resolve(request("127.0.0.2", { forwarded: "for=192.0.2.60" }))).toBe("127.0.0.2");
  });
});

describe("ClientAddressResolver reading Forwarded (configured)", () => {
  const resolver = new ClientAddressResolver({ addresses: PROXIES, header: "forwarded" });

  it("walks the for= parameters from the nearest hop, IPv6 and ports included", () => {
    const through = { forwarded: 'for=192.0.2.60;proto=http, for="[2001:db8::17]:4711"' };
    expect(resolver.resolve(request("127.0.0.2", through))).toBe("2001:db8::17");
    const chain = { forwarded: "for=6.6.6.6, for=198.51.100.7;by=x, for=10.2.2.2" };
    expect(resolver.resolve(request("10.1.1.1", chain))).toBe("198.51.100.7");
    expect(resolver.resolve(request("10.1.1.1", { forwarded: "for=unknown" }))).toBe("10.1.1.1");
  });

  it("ignores an X-Forwarded-For the client sent through a proxy that writes only Forwarded", () => {
    const through = { "x-forwarded-for": "203.0.113.77", forwarded: "for=198.51.100.30" };
    expect(resolver.resolve(request("127.0.0.2", through))).toBe("198.51.100.30");
    expect(resolver.resolve(request("127.0.0.2", { "x-forwarded-for": "203.0.113.77" }))).toBe("127.0.0.2");
  });

  it("still ignores both headers from an untrusted peer", () => {
    expect(resolver.resolve(request("203.0.113.9", { forwarded: "for=1.1.1.1" }))).toBe("203.0.113.9");
  });
});

describe("client addresses", () => {
  const resolver = new ClientAddressResolver({ addresses: PROXIES, header: "x-forwarded-for" });

  it("says unknown for a request from no socket", () => {
    const fromNoSocket = { ...request("", { "x-forwarded-for": "1.2.3.4" }), peerAddress: undefined };
    expect(resolver.resolve(fromNoSocket)).toBe("unknown");
  });

  it("normalizes addresses", () => {
    expect(normalizeAddress("1.2.3.4:8080")).toBe("1.2.3.4");
    expect(normalizeAddress("[::1]:80")).toBe("::1");
    expect(normalizeAddress("junk")).toBeUndefined();
  });
});

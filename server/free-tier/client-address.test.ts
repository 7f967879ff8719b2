import { describe, expect, it } from "vitest";
import { ClientAddressResolver, PEER_ADDRESS_HEADER, normalizeAddress } from "./client-address";

const request = (headers: Record<string, string>) => new Request("http://service.test/", { headers });
const PROXIES = ["10.0.0.0/8", "127.0.0.2"];

describe("ClientAddressResolver reading X-Forwarded-For (the default)", () => {
  const resolver = new ClientAddressResolver({ addresses: PROXIES, header: "x-forwarded-for" });

  it("uses the socket address and ignores forwarded headers from an untrusted peer", () => {
    expect(resolver.resolve(request({ [PEER_ADDRESS_HEADER]: "203.0.113.9", "x-forwarded-for": "1.1.1.1" }))).toBe(
      "203.0.113.9",
    );
    expect(resolver.resolve(request({ [PEER_ADDRESS_HEADER]: "203.0.113.9", forwarded: "for=1.1.1.1" }))).toBe(
      "203.0.113.9",
    );
    expect(resolver.resolve(request({ [PEER_ADDRESS_HEADER]: "::ffff:203.0.113.9" }))).toBe("203.0.113.9");
  });

  it("believes a trusted proxy, taking the nearest hop that is not a trusted proxy", () => {
    const forwarded = { [PEER_ADDRESS_HEADER]: "10.1.1.1", "x-forwarded-for": "6.6.6.6, 198.51.100.7, 10.2.2.2" };
    expect(resolver.resolve(request(forwarded))).toBe("198.51.100.7");
    expect(resolver.resolve(request({ [PEER_ADDRESS_HEADER]: "10.1.1.1", "x-forwarded-for": "not-an-ip" }))).toBe(
      "10.1.1.1",
    );
    expect(resolver.resolve(request({ [PEER_ADDRESS_HEADER]: "10.1.1.1" }))).toBe("10.1.1.1");
  });

  it("ignores a Forwarded header the client sent through a proxy that appends only to X-Forwarded-For", () => {
    // nginx with proxy_add_x_forwarded_for: the client's own Forwarded arrives untouched beside the real hop.
    for (const spoofed of ["203.0.113.77", "192.0.2.1", '"[2001:db8::99]"']) {
      const through = {
        [PEER_ADDRESS_HEADER]: "127.0.0.2",
        "x-forwarded-for": "198.51.100.20",
        forwarded: `for=${spoofed}`,
      };
      expect(resolver.resolve(request(through))).toBe("198.51.100.20");
    }
    // Without X-Forwarded-For there is nothing the proxy vouched for: the proxy itself is the caller.
    expect(resolver.resolve(request({ [PEER_ADDRESS_HEADER]: "127.0.0.2", forwarded: "for=192.0.2.60" }))).toBe(
      "127.0.0.2",
    );
  });
});

describe("ClientAddressResolver reading Forwarded (configured)", () => {
  const resolver = new ClientAddressResolver({ addresses: PROXIES, header: "forwarded" });

  it("walks the for= parameters from the nearest hop, IPv6 and ports included", () => {
    const through = {
      [PEER_ADDRESS_HEADER]: "127.0.0.2",
      forwarded: 'for=192.0.2.60;proto=http, for="[2001:db8::17]:4711"',
    };
    expect(resolver.resolve(request(through))).toBe("2001:db8::17");
    const chain = { [PEER_ADDRESS_HEADER]: "10.1.1.1", forwarded: "for=6.6.6.6, for=198.51.100.7;by=x, for=10.2.2.2" };
    expect(resolver.resolve(request(chain))).toBe("198.51.100.7");
    expect(resolver.resolve(request({ [PEER_ADDRESS_HEADER]: "10.1.1.1", forwarded: "for=unknown" }))).toBe("10.1.1.1");
  });

  it("ignores an X-Forwarded-For the client sent through a proxy that writes only Forwarded", () => {
    const through = {
      [PEER_ADDRESS_HEADER]: "127.0.0.2",
      "x-forwarded-for": "203.0.113.77",
      forwarded: "for=198.51.100.30",
    };
    expect(resolver.resolve(request(through))).toBe("198.51.100.30");
    expect(resolver.resolve(request({ [PEER_ADDRESS_HEADER]: "127.0.0.2", "x-forwarded-for": "203.0.113.77" }))).toBe(
      "127.0.0.2",
    );
  });

  it("still ignores both headers from an untrusted peer", () => {
    expect(resolver.resolve(request({ [PEER_ADDRESS_HEADER]: "203.0.113.9", forwarded: "for=1.1.1.1" }))).toBe(
      "203.0.113.9",
    );
  });
});

describe("client addresses", () => {
  const resolver = new ClientAddressResolver({ addresses: PROXIES, header: "x-forwarded-for" });

  it("says unknown without the peer header", () => {
    expect(resolver.resolve(request({ "x-forwarded-for": "1.2.3.4" }))).toBe("unknown");
  });

  it("normalizes addresses", () => {
    expect(normalizeAddress("1.2.3.4:8080")).toBe("1.2.3.4");
    expect(normalizeAddress("[::1]:80")).toBe("::1");
    expect(normalizeAddress("junk")).toBeUndefined();
  });
});

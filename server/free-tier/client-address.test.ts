import { describe, expect, it } from "vitest";
import { ClientAddressResolver, PEER_ADDRESS_HEADER, normalizeAddress } from "./client-address";

const request = (headers: Record<string, string>) => new Request("http://service.test/", { headers });

describe("ClientAddressResolver", () => {
  const resolver = new ClientAddressResolver(["10.0.0.0/8", "127.0.0.2"]);

  it("uses the socket address and ignores forwarded headers from an untrusted peer", () => {
    expect(resolver.resolve(request({ [PEER_ADDRESS_HEADER]: "203.0.113.9", "x-forwarded-for": "1.1.1.1" }))).toBe(
      "203.0.113.9",
    );
    expect(resolver.resolve(request({ [PEER_ADDRESS_HEADER]: "::ffff:203.0.113.9" }))).toBe("203.0.113.9");
  });

  it("believes a trusted proxy, taking the nearest hop that is not a trusted proxy", () => {
    const forwarded = { [PEER_ADDRESS_HEADER]: "10.1.1.1", "x-forwarded-for": "6.6.6.6, 198.51.100.7, 10.2.2.2" };
    expect(resolver.resolve(request(forwarded))).toBe("198.51.100.7");
    expect(
      resolver.resolve(
        request({
          [PEER_ADDRESS_HEADER]: "127.0.0.2",
          forwarded: 'for=192.0.2.60;proto=http, for="[2001:db8::17]:4711"',
        }),
      ),
    ).toBe("2001:db8::17");
    expect(resolver.resolve(request({ [PEER_ADDRESS_HEADER]: "10.1.1.1", "x-forwarded-for": "not-an-ip" }))).toBe(
      "10.1.1.1",
    );
    expect(resolver.resolve(request({ [PEER_ADDRESS_HEADER]: "10.1.1.1" }))).toBe("10.1.1.1");
  });

  it("says unknown without the peer header", () => {
    expect(resolver.resolve(request({ "x-forwarded-for": "1.2.3.4" }))).toBe("unknown");
  });

  it("normalizes addresses", () => {
    expect(normalizeAddress("1.2.3.4:8080")).toBe("1.2.3.4");
    expect(normalizeAddress("[::1]:80")).toBe("::1");
    expect(normalizeAddress("junk")).toBeUndefined();
  });
});

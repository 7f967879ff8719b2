import { describe, expect, it } from "vitest";
import { normalizeAddress } from "../http/client-address";
import { callerGroup } from "./caller-group";

describe("callerGroup", () => {
  it("counts an IPv6 caller by its /64, however the address is written", () => {
    const group = "2001:db8:0:1::/64";
    for (const address of [
      "2001:db8:0:1::1",
      "2001:db8:0:1:ffff:ffff:ffff:ffff",
      "2001:0DB8:0000:0001:0000:0000:0000:0042",
      "[2001:db8:0:1:abcd::9]:443",
    ]) {
      expect(callerGroup(normalizeAddress(address)!), address).toBe(group);
    }
    expect(callerGroup("2001:db8:0:2::1")).toBe("2001:db8:0:2::/64");
    expect(callerGroup("2001:db8::")).toBe("2001:db8:0:0::/64");
    expect(callerGroup("::1")).toBe("0:0:0:0::/64");
    expect(callerGroup("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
    expect(callerGroup("64:ff9b::192.0.2.1")).toBe("64:ff9b:0:0::/64");
  });

  it("keeps IPv4 addresses (mapped ones included) and unknown callers as they are", () => {
    expect(callerGroup("198.51.100.7")).toBe("198.51.100.7");
    expect(callerGroup(normalizeAddress("::ffff:198.51.100.7")!)).toBe("198.51.100.7");
    expect(callerGroup("unknown")).toBe("unknown");
  });
});

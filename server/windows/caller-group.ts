import { isIP } from "node:net";

/**
 * The caller a free window counts: an IPv4 address as it is, an IPv6 address by its /64. A single host or home
 * line is usually given a whole /64 (SLAAC, privacy addresses), so counting each IPv6 address apart would hand one
 * caller 2^64 fresh quotas. `address` is a normalized one (client-address.ts), or "unknown".
 */
export function callerGroup(address: string): string {
  if (isIP(address) !== 6) return address;
  return `${expandIpv6(address).slice(0, 4).join(":")}::/64`;
}

/** The eight groups of an IPv6 address, each as a number's lowercase hex without leading zeros. */
function expandIpv6(address: string): string[] {
  let text = address.toLowerCase().replace(/%.*$/, "");
  // A trailing dotted IPv4 part (::ffff:1.2.3.4, 64:ff9b::1.2.3.4) is two groups.
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const before = head === "" ? [] : head.split(":");
  const after = tail === undefined || tail === "" ? [] : tail.split(":");
  const zeros = tail === undefined ? [] : Array.from({ length: 8 - before.length - after.length }, () => "0");
  return [...before, ...zeros, ...after].map((group) => parseInt(group, 16).toString(16));
}

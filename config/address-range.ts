import { isIP } from "node:net";

export interface AddressRange {
  address: string;
  prefix: number;
  family: "ipv4" | "ipv6";
}

/** "10.0.0.0/8", "::1" or "127.0.0.1" -> a range; undefined when it is neither an address nor a CIDR range. */
export function parseAddressRange(entry: string): AddressRange | undefined {
  const [address = "", prefixText] = entry.split("/");
  const version = isIP(address);
  if (version === 0) return undefined;
  const bits = version === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? bits : Number(prefixText);
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > bits) return undefined;
  return { address, prefix, family: version === 4 ? "ipv4" : "ipv6" };
}

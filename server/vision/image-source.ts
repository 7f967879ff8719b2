import { imageSize } from "image-size";
import ipaddr from "ipaddr.js";

/** What an image part gives to price it: its dimensions (a data URL), or only that it is a public URL. */
export type ImageSource = { kind: "data"; width: number; height: number } | { kind: "url" };

/** An image part refused: why, for a 400 that names the part. */
export class ImageRefused extends Error {}

const MEDIA_TYPES: Record<string, string> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/jpg": "jpg",
  "image/gif": "gif",
  "image/webp": "webp",
};
const DATA_URL = /^data:([\w.+-]+\/[\w.+-]+);base64,/i;
/** The base64 of 48 KiB: where PNG, GIF and WebP keep their dimensions, and most JPEGs. */
const HEADER_CHARS = 65_536;
const MAX_SIDE = 65_535;

/**
 * An image part's URL read for its price, never fetched: a data URL of a PNG, JPEG, GIF or WebP image of at most
 * `maxBytes` (its dimensions read from the image's header, as the provider will read them), or an https URL of a
 * public host (judged on the host name as written, never resolved). Anything else is refused.
 */
export function imageSource(url: string, maxBytes: number): ImageSource {
  if (url.startsWith("data:")) return dataImage(url, maxBytes);
  if (/^https:/i.test(url)) {
    publicHost(url);
    return { kind: "url" };
  }
  throw new ImageRefused(
    `must be an https URL of a public host or a data URL (data:image/png;base64,...) of a PNG, JPEG, GIF or WebP image; got ${describe(url)}`,
  );
}

function dataImage(url: string, maxBytes: number): ImageSource {
  const header = DATA_URL.exec(url.slice(0, 128));
  const mediaType = header?.[1]?.toLowerCase();
  const declared = mediaType === undefined ? undefined : MEDIA_TYPES[mediaType];
  if (!header || declared === undefined) {
    throw new ImageRefused(
      `a data URL must be base64 of image/png, image/jpeg, image/gif or image/webp (data:image/png;base64,...); got ${describe(url)}`,
    );
  }
  const data = url.slice(header[0].length);
  const bytes = Math.floor((data.length * 3) / 4) - (data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0);
  if (bytes > maxBytes) {
    throw new ImageRefused(`the image is ${bytes} bytes; this model takes images of at most ${maxBytes} bytes`);
  }
  // Only the header is decoded and checked: a test of all of a 4 MB image's base64 would cost 50 ms. Junk past the
  // header is the provider's to refuse, and a call it refuses is charged nothing.
  if (data.length % 4 !== 0) throw new ImageRefused("the data URL's image is not valid base64");
  const size = sizeOf(data);
  const found = size && MEDIA_TYPES[`image/${size.type}`];
  if (size === undefined || found === undefined) {
    throw new ImageRefused(`the data is not a PNG, JPEG, GIF or WebP image (declared ${mediaType})`);
  }
  if (found !== declared) {
    throw new ImageRefused(
      `the data URL says ${mediaType} but the image is ${size.type === "jpg" ? "a JPEG" : size.type}`,
    );
  }
  if (size.width < 1 || size.height < 1 || size.width > MAX_SIDE || size.height > MAX_SIDE) {
    throw new ImageRefused(`the image is ${size.width}x${size.height}; each side must be 1 to ${MAX_SIDE} pixels`);
  }
  return { kind: "data", width: size.width, height: size.height };
}

/** The image's type and dimensions from its header: its first 48 KiB decoded, or all of it for a JPEG that needs it. */
function sizeOf(data: string): { type: string; width: number; height: number } | undefined {
  const read = (chars: string) => {
    try {
      const { type, width, height } = imageSize(Buffer.from(chars, "base64"));
      return type === undefined || width === undefined || height === undefined ? undefined : { type, width, height };
    } catch {
      return undefined;
    }
  };
  return read(data.slice(0, HEADER_CHARS)) ?? (data.length > HEADER_CHARS ? read(data) : undefined);
}

/** Host names that are this machine or its private network by convention, whatever they resolve to. */
const PRIVATE_NAMES = /(^|\.)(localhost|local|internal|intranet|lan|home|corp|localdomain|home\.arpa)$/;

/** Refuses an https URL whose host is not plainly a public one: an address outside public unicast, or a local name. */
function publicHost(url: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ImageRefused(`is not a URL: ${describe(url)}`);
  }
  if (parsed.username || parsed.password) throw new ImageRefused("an image URL may not carry a user name or password");
  const host = parsed.hostname.toLowerCase().replace(/\.$/, "");
  const literal = host.startsWith("[") ? host.slice(1, -1) : host;
  if (ipaddr.isValid(literal)) {
    let address = ipaddr.parse(literal);
    if (address.kind() === "ipv6" && (address as ipaddr.IPv6).isIPv4MappedAddress()) {
      address = (address as ipaddr.IPv6).toIPv4Address();
    }
    if (address.range() !== "unicast") {
      throw new ImageRefused(`the image's host ${parsed.hostname} is a ${address.range()} address, not a public one`);
    }
    return;
  }
  if (!host.includes(".") || PRIVATE_NAMES.test(host)) {
    throw new ImageRefused(`the image's host ${parsed.hostname} is not a public host name`);
  }
}

/** A URL as an error names it: its scheme and a few characters, never megabytes of data. */
function describe(url: string): string {
  return url.length > 48 ? `${JSON.stringify(url.slice(0, 40))}...` : JSON.stringify(url);
}

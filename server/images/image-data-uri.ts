import { imageLimits } from "../../config/image-models";
import { ApiError } from "../core/errors";

export type ImageMediaType = "image/png" | "image/jpeg" | "image/webp";

export interface DecodedImage {
  mediaType: ImageMediaType;
  bytes: Buffer;
}

const DATA_URI = /^data:(image\/[a-z0-9.+-]+);base64,([A-Za-z0-9+/]*={0,2})$/;

/** The media type the bytes actually are, by their magic numbers. */
export function sniffImageType(bytes: Buffer): ImageMediaType | undefined {
  if (bytes.length >= 8 && bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) {
    return "image/png";
  }
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return "image/jpeg";
  if (bytes.length >= 12 && bytes.toString("ascii", 0, 4) === "RIFF" && bytes.toString("ascii", 8, 12) === "WEBP") {
    return "image/webp";
  }
  return undefined;
}

function invalid(message: string): ApiError {
  return new ApiError("invalid_request", message, { param: "image" });
}

/**
 * The edit endpoint's input image: a base64 data URI whose declared type is PNG, JPEG or WebP, whose bytes are
 * of that same type, and which decodes to at most 10 MB. The size is checked before decoding.
 */
export function decodeImageDataUri(value: string): DecodedImage {
  const match = DATA_URI.exec(value);
  if (!match) throw invalid("image must be a base64 data URI: data:image/png;base64,... (PNG, JPEG or WebP)");
  const declared = match[1] === "image/jpg" ? "image/jpeg" : match[1];
  if (declared !== "image/png" && declared !== "image/jpeg" && declared !== "image/webp") {
    throw invalid(`image type ${match[1]} is not supported; send PNG, JPEG or WebP`);
  }
  const base64 = match[2] ?? "";
  const padding = base64.endsWith("==") ? 2 : base64.endsWith("=") ? 1 : 0;
  const decodedLength = Math.floor((base64.length * 3) / 4) - padding;
  if (decodedLength > imageLimits.maxImageBytes) {
    throw invalid(`image is ${decodedLength} bytes; the limit is ${imageLimits.maxImageBytes} bytes (10 MB)`);
  }
  const bytes = Buffer.from(base64, "base64");
  const actual = sniffImageType(bytes);
  if (!actual) throw invalid("image bytes are not a PNG, JPEG or WebP file");
  if (actual !== declared) throw invalid(`image is declared ${declared} but its bytes are ${actual}`);
  return { mediaType: actual, bytes };
}

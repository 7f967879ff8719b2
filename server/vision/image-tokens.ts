import type { VisionPricing } from "../../config/catalog/vision";

/** What OpenAI's chat calls `detail`: low is a fixed small count where the formula has one. */
export type ImageDetail = "low" | "high" | "auto";

const ceilDiv = (numerator: number, denominator: number) => Math.ceil(numerator / denominator);

/**
 * The input tokens of a `width` x `height` image as the model's provider counts it (its formula and constants, from
 * the catalog): the image resized as the provider resizes it, then counted. The same image gives the same count in
 * every API it comes in, since each is priced on the canonical chat request.
 */
export function imageTokens(
  vision: VisionPricing,
  width: number,
  height: number,
  detail: ImageDetail = "auto",
): number {
  switch (vision.formula) {
    case "tiles":
      return detail === "low" ? vision.baseTokens : tiledTokens(vision, width, height);
    case "patches":
      return patchedTokens(vision, width, height);
    case "pixels":
      return pixelTokens(vision, width, height);
  }
}

/**
 * The most one image can count under the formula (with `detail`): what an image by URL, never fetched here, is
 * priced at.
 */
export function largestImageTokens(vision: VisionPricing, detail: ImageDetail = "auto"): number {
  switch (vision.formula) {
    case "tiles": {
      if (detail === "low") return vision.baseTokens;
      const { baseTokens, tileTokens, tileSize, fitWithin, shortSide } = vision;
      return baseTokens + tileTokens * ceilDiv(Math.min(shortSide, fitWithin), tileSize) * ceilDiv(fitWithin, tileSize);
    }
    case "patches":
      return withMultiplier(vision.maxPatches, vision.multiplier);
    case "pixels":
      return vision.maxTokens;
  }
}

/**
 * Tiles: scaled to fit within a `fitWithin` square, then (when its shortest side is still longer) scaled so that
 * side is `shortSide`; each `tileSize` square it covers, part or whole, is a tile. The two scalings compose into
 * one ratio (`numerator` / `denominator`), so the tiles are counted in integers, never off by a rounding.
 */
function tiledTokens(vision: Extract<VisionPricing, { formula: "tiles" }>, width: number, height: number): number {
  const { baseTokens, tileTokens, tileSize, fitWithin, shortSide } = vision;
  const long = Math.max(width, height);
  const short = Math.min(width, height);
  let numerator = 1;
  let denominator = 1;
  if (long > fitWithin) [numerator, denominator] = [fitWithin, long];
  // The shortest side after the first scaling, compared without dividing: short * n / d > shortSide.
  if (short * numerator > shortSide * denominator) [numerator, denominator] = [shortSide, short];
  const across = ceilDiv(width * numerator, denominator * tileSize);
  const down = ceilDiv(height * numerator, denominator * tileSize);
  return baseTokens + tileTokens * across * down;
}

/**
 * Patches, as OpenAI documents them: the `patchSize` squares an image covers; over `maxPatches`, the image is shrunk
 * by the square root of the ratio, then a little more so that whole patches fit its width or height, and counted
 * again; times the model's multiplier, rounded up.
 */
function patchedTokens(vision: Extract<VisionPricing, { formula: "patches" }>, width: number, height: number): number {
  const { patchSize, maxPatches, multiplier } = vision;
  let patches = ceilDiv(width, patchSize) * ceilDiv(height, patchSize);
  if (patches > maxPatches) {
    const shrink = Math.sqrt((patchSize * patchSize * maxPatches) / (width * height));
    const across = (width * shrink) / patchSize;
    const down = (height * shrink) / patchSize;
    const adjusted = shrink * Math.min(Math.floor(across) / across, Math.floor(down) / down);
    patches = Math.min(
      maxPatches,
      ceilDiv(Math.floor(width * adjusted), patchSize) * ceilDiv(Math.floor(height * adjusted), patchSize),
    );
  }
  return withMultiplier(patches, multiplier);
}

/** `count` times a decimal multiplier ("1.62"), rounded up, in integers. */
function withMultiplier(count: number, multiplier: string): number {
  const [whole = "0", fraction = ""] = multiplier.split(".");
  const scale = 10 ** fraction.length;
  return ceilDiv(count * (Number(whole) * scale + Number(fraction || "0")), scale);
}

/**
 * Pixels, as Anthropic documents them: an image whose long side is over `maxLongSide`, or that would count over
 * `maxTokens`, is scaled down (its aspect ratio kept) until neither holds; then width x height / `pixelsPerToken`,
 * rounded up (never over `maxTokens`).
 */
function pixelTokens(vision: Extract<VisionPricing, { formula: "pixels" }>, width: number, height: number): number {
  const { pixelsPerToken, maxLongSide, maxTokens } = vision;
  const scale = Math.min(
    1,
    maxLongSide / Math.max(width, height),
    Math.sqrt((maxTokens * pixelsPerToken) / (width * height)),
  );
  const scaledWidth = Math.max(1, Math.floor(width * scale));
  const scaledHeight = Math.max(1, Math.floor(height * scale));
  return Math.min(maxTokens, ceilDiv(scaledWidth * scaledHeight, pixelsPerToken));
}

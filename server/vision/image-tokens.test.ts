import { describe, expect, it } from "vitest";
import { VISION_DEFAULTS, type VisionPricing } from "../../config/catalog/vision";
import { imageTokens, largestImageTokens } from "./image-tokens";

const tiles: VisionPricing = { formula: "tiles", ...VISION_DEFAULTS.tiles };
const patches: VisionPricing = { formula: "patches", ...VISION_DEFAULTS.patches, multiplier: "1.62" };
const pixels: VisionPricing = { formula: "pixels", ...VISION_DEFAULTS.pixels };

describe("OpenAI's tiles", () => {
  // OpenAI's own worked examples (its vision guide): 1024 square, 2048x4096, and low detail.
  it("counts as OpenAI's examples do", () => {
    expect(imageTokens(tiles, 1024, 1024)).toBe(765);
    expect(imageTokens(tiles, 2048, 4096)).toBe(1105);
    expect(imageTokens(tiles, 4096, 8192, "low")).toBe(85);
    expect(imageTokens(tiles, 512, 512)).toBe(255);
    expect(imageTokens(tiles, 1, 1)).toBe(255);
  });

  it("never counts past its largest, which an image by URL is priced at", () => {
    expect(largestImageTokens(tiles)).toBe(85 + 170 * 2 * 4);
    expect(largestImageTokens(tiles, "low")).toBe(85);
    for (const [width, height] of [
      [65_535, 1],
      [1, 65_535],
      [768, 2048],
      [769, 2049],
      [3000, 7000],
      [65_535, 65_535],
    ] as const) {
      expect(imageTokens(tiles, width, height)).toBeLessThanOrEqual(largestImageTokens(tiles));
    }
  });
});

describe("OpenAI's patches", () => {
  // OpenAI's examples: 1024x1024 is 1024 patches; 1800x2400 is shrunk to 1452 patches.
  it("counts as OpenAI's examples do, times the multiplier", () => {
    expect(imageTokens({ ...patches, multiplier: "1" }, 1024, 1024)).toBe(1024);
    expect(imageTokens({ ...patches, multiplier: "1" }, 1800, 2400)).toBe(1452);
    expect(imageTokens(patches, 1024, 1024)).toBe(Math.ceil(1024 * 1.62));
    expect(largestImageTokens(patches)).toBe(Math.ceil(1536 * 1.62));
  });
});

describe("Anthropic's pixels", () => {
  it("counts width x height / 750, scaled down past 1568 pixels or 1600 tokens", () => {
    expect(imageTokens(pixels, 1024, 1024)).toBe(Math.ceil((1024 * 1024) / 750));
    expect(imageTokens(pixels, 200, 200)).toBe(54);
    expect(imageTokens(pixels, 1092, 1092)).toBeLessThanOrEqual(1600);
    expect(imageTokens(pixels, 5000, 5000)).toBeLessThanOrEqual(1600);
    expect(imageTokens(pixels, 5000, 5000)).toBeGreaterThan(1550);
    expect(largestImageTokens(pixels)).toBe(1600);
  });
});

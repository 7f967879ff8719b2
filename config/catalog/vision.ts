import { z } from "zod";

/**
 * How a chat model's provider counts an image as input tokens: the formula it documents and its constants, data of
 * the catalog (docs/catalog.md). An image's tokens are computed from its dimensions as the provider resizes it
 * (server/vision/image-tokens.ts); an image given by URL, never fetched here, counts the most the formula allows.
 */
export type VisionPricing =
  /**
   * OpenAI's tiles (GPT-4o, GPT-4.1, GPT-5): fit within `fitWithin` square, then the shortest side scaled down to
   * `shortSide`; `baseTokens` plus `tileTokens` per `tileSize` square tile; `detail: "low"` is `baseTokens` alone.
   */
  | {
      formula: "tiles";
      baseTokens: number;
      tileTokens: number;
      tileSize: number;
      fitWithin: number;
      shortSide: number;
      maxImageBytes: number;
    }
  /**
   * OpenAI's patches (GPT-4.1 mini and nano, o4-mini): `patchSize` square patches, scaled down to at most
   * `maxPatches`, times the model's `multiplier` (a decimal string), rounded up.
   */
  | { formula: "patches"; patchSize: number; maxPatches: number; multiplier: string; maxImageBytes: number }
  /**
   * Anthropic's pixels: scaled down until the long side is at most `maxLongSide` and the count at most `maxTokens`,
   * then width x height / `pixelsPerToken`, rounded up.
   */
  | { formula: "pixels"; pixelsPerToken: number; maxLongSide: number; maxTokens: number; maxImageBytes: number };

const MIB = 1024 * 1024;

/** Each formula's constants as its provider publishes them, and its largest image (Anthropic's API takes 5 MB). */
export const VISION_DEFAULTS = {
  tiles: { baseTokens: 85, tileTokens: 170, tileSize: 512, fitWithin: 2048, shortSide: 768, maxImageBytes: 20 * MIB },
  patches: { patchSize: 32, maxPatches: 1536, multiplier: "1", maxImageBytes: 20 * MIB },
  pixels: { pixelsPerToken: 750, maxLongSide: 1568, maxTokens: 1600, maxImageBytes: 5 * MIB },
} as const;

const whole = (max: number) =>
  z
    .number({ error: "must be a whole number" })
    .int("must be a whole number")
    .positive()
    .max(max, `must be at most ${max}`);
/** The body's own cap: no image can be larger. */
const maxImageBytes = whole(24 * MIB).optional();

/** A chat model's `vision` in a catalog file: the formula, and any constant that differs from its provider's. */
export const visionEntry = z
  .discriminatedUnion(
    "formula",
    [
      z.strictObject({
        formula: z.literal("tiles"),
        base_tokens: whole(100_000).optional(),
        tile_tokens: whole(100_000).optional(),
        tile_size: whole(10_000).optional(),
        fit_within: whole(100_000).optional(),
        short_side: whole(100_000).optional(),
        max_image_bytes: maxImageBytes,
      }),
      z.strictObject({
        formula: z.literal("patches"),
        patch_size: whole(10_000).optional(),
        max_patches: whole(1_000_000).optional(),
        multiplier: z
          .string({ error: 'must be a decimal written as a string, such as "1.62"' })
          .regex(/^\d{1,3}(\.\d{1,6})?$/, 'must be a decimal such as "1.62"')
          .refine((value) => Number(value) > 0, "must be above zero")
          .optional(),
        max_image_bytes: maxImageBytes,
      }),
      z.strictObject({
        formula: z.literal("pixels"),
        pixels_per_token: whole(1_000_000).optional(),
        max_long_side: whole(100_000).optional(),
        max_tokens: whole(1_000_000).optional(),
        max_image_bytes: maxImageBytes,
      }),
    ],
    { error: 'must be {"formula": "tiles"}, {"formula": "patches"} or {"formula": "pixels"}, with any constants' },
  )
  .transform((entry): VisionPricing => {
    switch (entry.formula) {
      case "tiles": {
        const d = VISION_DEFAULTS.tiles;
        return {
          formula: "tiles",
          baseTokens: entry.base_tokens ?? d.baseTokens,
          tileTokens: entry.tile_tokens ?? d.tileTokens,
          tileSize: entry.tile_size ?? d.tileSize,
          fitWithin: entry.fit_within ?? d.fitWithin,
          shortSide: entry.short_side ?? d.shortSide,
          maxImageBytes: entry.max_image_bytes ?? d.maxImageBytes,
        };
      }
      case "patches": {
        const d = VISION_DEFAULTS.patches;
        return {
          formula: "patches",
          patchSize: entry.patch_size ?? d.patchSize,
          maxPatches: entry.max_patches ?? d.maxPatches,
          multiplier: entry.multiplier ?? d.multiplier,
          maxImageBytes: entry.max_image_bytes ?? d.maxImageBytes,
        };
      }
      case "pixels": {
        const d = VISION_DEFAULTS.pixels;
        return {
          formula: "pixels",
          pixelsPerToken: entry.pixels_per_token ?? d.pixelsPerToken,
          maxLongSide: entry.max_long_side ?? d.maxLongSide,
          maxTokens: entry.max_tokens ?? d.maxTokens,
          maxImageBytes: entry.max_image_bytes ?? d.maxImageBytes,
        };
      }
    }
  });

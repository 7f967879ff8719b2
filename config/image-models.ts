/** The image endpoints' limits; the models, their sizes and prices are the catalog's (config/catalog). */
export const imageLimits = {
  minImages: 1,
  maxImages: 4,
  defaultImages: 1,
  maxPromptCharacters: 4000,
  /** Decoded size of the edit endpoint's input image. */
  maxImageBytes: 10 * 1024 * 1024,
} as const;

/** The image models, their only size, and the listed price per image (USD, excluding payment overhead). */
export interface ImageModel {
  id: string;
  size: string;
  usdPerImage: string;
}

export const imageModels: readonly ImageModel[] = [
  { id: "gpt-image-2", size: "1024x1024", usdPerImage: "0.02" },
  { id: "gpt-image-2.5", size: "1024x1024", usdPerImage: "0.04" },
  { id: "gpt-image-2.5-flare", size: "1024x1024", usdPerImage: "0.04" },
  { id: "gpt-image-2.5-sunburst", size: "1024x1024", usdPerImage: "0.04" },
  { id: "vendor-c-imagine-image", size: "1024x1024", usdPerImage: "0.045" },
  { id: "gpt-image-2-2k", size: "2048x2048", usdPerImage: "0.09" },
  { id: "gpt-image-2.5-sunburst-2k", size: "2048x2048", usdPerImage: "0.22" },
];

export const imageModelIds = imageModels.map((model) => model.id);

export function findImageModel(id: string): ImageModel | undefined {
  return imageModels.find((model) => model.id === id);
}

export const imageLimits = {
  minImages: 1,
  maxImages: 4,
  defaultImages: 1,
  maxPromptCharacters: 4000,
  /** Decoded size of the edit endpoint's input image. */
  maxImageBytes: 10 * 1024 * 1024,
} as const;

import { z } from "zod";
import { findImageModel, type ImageModel, type ModelCatalog } from "../../config/catalog/model-catalog";
import { imageLimits } from "../../config/image-models";
import { ApiError } from "../core/errors";
import { parseOrThrow, requireJsonObject } from "../core/validation";
import { decodeImageDataUri, type DecodedImage } from "./image-data-uri";

export const imageRequestSchema = z.looseObject({
  model: z.string(),
  size: z.string({ error: "must be a string such as 1024x1024" }),
  n: z
    .number({ error: "must be an integer from 1 to 4" })
    .int("must be an integer from 1 to 4")
    .min(imageLimits.minImages, "must be at least 1")
    .max(imageLimits.maxImages, `must be at most ${imageLimits.maxImages}`)
    .optional(),
  prompt: z
    .string({ error: "must be a string" })
    .min(1, "must not be empty")
    .max(imageLimits.maxPromptCharacters, `must be at most ${imageLimits.maxPromptCharacters} characters`),
  response_format: z.enum(["b64_json", "url"], { error: "must be b64_json or url" }).optional(),
  image: z.string({ error: "must be a base64 data URI" }).optional(),
});

export interface ParsedImageRequest {
  model: ImageModel;
  size: string;
  n: number;
  prompt: string;
  responseFormat: "b64_json" | "url";
  /** The input image of an edit. */
  image?: DecodedImage;
}

/** Validates an image request for `/generations` (`edit` false) or `/image2image` (`edit` true). */
export function parseImageRequest(value: unknown, edit: boolean, catalog: ModelCatalog): ParsedImageRequest {
  requireJsonObject(value);
  const model = (value as { model?: unknown }).model;
  if (model === undefined || model === null || model === "") {
    throw new ApiError("invalid_request", "You must provide a model parameter", { param: "model" });
  }
  const imageModel = typeof model === "string" ? findImageModel(catalog, model) : undefined;
  if (!imageModel) {
    throw new ApiError(
      "model_not_found",
      `The image model '${String(model)}' is not sold here. Available: ${catalog.images.map((image) => image.id).join(", ")}`,
      {
        param: "model",
      },
    );
  }
  const body = parseOrThrow(imageRequestSchema, value);
  if (!imageModel.sizes.includes(body.size)) {
    throw new ApiError(
      "invalid_request",
      `size ${body.size} is not offered for ${imageModel.id}; use ${imageModel.sizes.join(" or ")}`,
      {
        param: "size",
      },
    );
  }
  if (!edit && body.image !== undefined) {
    throw new ApiError("invalid_request", "image is not accepted here; send edits to /api/v1/images/image2image", {
      param: "image",
    });
  }
  if (edit && body.image === undefined) {
    throw new ApiError("invalid_request", "image is required: a base64 data URI of a PNG, JPEG or WebP image", {
      param: "image",
    });
  }
  return {
    model: imageModel,
    size: body.size,
    n: body.n ?? imageLimits.defaultImages,
    prompt: body.prompt,
    responseFormat: body.response_format ?? "b64_json",
    image: body.image === undefined ? undefined : decodeImageDataUri(body.image),
  };
}

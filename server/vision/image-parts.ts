import type { ChatModel } from "../../config/catalog/model-catalog";
import { ApiError } from "../core/errors";
import { ImageRefused, imageSource } from "./image-source";
import { imageTokens, largestImageTokens, type ImageDetail } from "./image-tokens";

/**
 * Where a canonical chat image part came from in the caller's own request (its param, such as
 * `messages[0].content[2].source`), set by the dialect that built the part: a refusal names it there.
 */
const origins = new WeakMap<object, string>();

/** A chat image part built from the caller's `param`, for refusals to name. */
export function imageFrom<T extends object>(part: T, param: string): T {
  origins.set(part, param);
  return part;
}

/** A chat image part: `{type: "image_url", image_url: {url, detail?}}`. */
export function chatImagePart(
  url: string,
  detail?: ImageDetail,
): { type: "image_url"; image_url: { url: string; detail?: ImageDetail } } {
  return { type: "image_url", image_url: detail === undefined ? { url } : { url, detail } };
}

/**
 * The input tokens of every image of a canonical chat request, as the model's provider counts them: each read for
 * its dimensions (a data URL's header; an https URL of a public host counts the formula's most), each refused with
 * a 400 naming it where it breaks the rules (image-source.ts); any image to a model without vision is a 400. Once
 * past `limit`, the rest are not read (the count is then a lower bound, over the limit).
 */
export function chatImageTokens(
  model: ChatModel,
  messages: readonly { content?: unknown }[],
  limit = Number.POSITIVE_INFINITY,
): number {
  let tokens = 0;
  messages.forEach((message, index) => {
    if (!Array.isArray(message.content)) return;
    message.content.forEach((part: unknown, partIndex) => {
      // Past the limit, the request is refused whatever the rest: no more image is read for it.
      if (tokens > limit || !isImagePart(part)) return;
      const param = origins.get(part) ?? `messages[${index}].content[${partIndex}].image_url.url`;
      const { vision } = model;
      if (!vision) {
        throw new ApiError(
          "invalid_request",
          `Invalid '${param}': ${model.id} does not read images; send text only, or ask a model that reads them`,
          { param },
        );
      }
      const { url, detail } = part.image_url;
      try {
        const source = imageSource(url, vision.maxImageBytes);
        tokens +=
          source.kind === "url"
            ? largestImageTokens(vision, detail)
            : imageTokens(vision, source.width, source.height, detail);
      } catch (error) {
        if (!(error instanceof ImageRefused)) throw error;
        throw new ApiError("invalid_request", `Invalid '${param}': ${error.message}`, { param });
      }
    });
  });
  return tokens;
}

function isImagePart(part: unknown): part is { type: "image_url"; image_url: { url: string; detail?: ImageDetail } } {
  return typeof part === "object" && part !== null && (part as { type?: unknown }).type === "image_url";
}

import type { ModelCatalog } from "../../config/catalog/model-catalog";
import { createImages } from "../images/create-images";
import { imageRequestSchema, parseImageRequest } from "../images/image-request";
import { quoteImages } from "../pricing/quote-images";
import { paidEndpoint } from "../context/endpoint";

/** A 10 MB image is about 13.4 MB of base64; 15 MiB leaves room for the rest of the body and nothing more. */
const MAX_IMAGE_BODY_BYTES = 15 * 1024 * 1024;

const example = { model: "gpt-image-2", size: "1024x1024", prompt: "A lighthouse at dusk", n: 1 };
const ONE_PIXEL_PNG =
  "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";

/** Endpoints 5 (generation) and 6 (`edit`: image to image), paid per request. */
function imageEndpoint(
  catalog: ModelCatalog,
  edit: boolean,
  path: string,
  docs: { operationId: string; summary: string },
) {
  const pricing = `listed price per image x n (1 to 4) + settlement overhead: ${catalog.images.map((model) => `${model.id} ${model.sizes.join("/")} ${model.usdPerImage}`).join(", ")}`;
  return paidEndpoint({
    method: "POST",
    paths: [path],
    access: ["x402"],
    callsProvider: true,
    channels: true,
    overlapsVerify: true,
    body: { maxBytes: MAX_IMAGE_BODY_BYTES },
    schema: imageRequestSchema,
    parse: (value) => parseImageRequest(value, edit, catalog),
    quote(parsed, network) {
      const quote = quoteImages(parsed.model, parsed.size, parsed.n, network);
      const kind = edit ? "Image edit" : "Image generation";
      return {
        ...quote,
        model: parsed.model.id,
        description: `${kind} with ${parsed.model.id}, ${parsed.n} x ${parsed.size}`,
      };
    },
    async work(context, parsed, grant, request) {
      const served = await createImages(context, parsed, grant.signal, request.trace);
      return { kind: "json", body: served.value, provider: served.provider };
    },
    docs: {
      ...docs,
      example: edit ? { ...example, image: ONE_PIXEL_PNG } : example,
      responseDescription: "{created, data: [{b64_json} | {url}]}",
      pricing,
    },
  });
}

export const imageGenerations = (catalog: ModelCatalog) =>
  imageEndpoint(catalog, false, "/api/v1/images/generations", {
    operationId: "generateImages",
    summary: "Image generation",
  });

export const imageEdits = (catalog: ModelCatalog) =>
  imageEndpoint(catalog, true, "/api/v1/images/image2image", {
    operationId: "editImages",
    summary: "Image editing (image: base64 data URI of a PNG, JPEG or WebP, at most 10 MB)",
  });

import type { ChatModel, ImageModel, ModelCatalog, Route } from "./model-catalog";
import { VISION_DEFAULTS } from "./vision";

/** The spec's context window and the largest output a chat call may ask for. */
export const DEFAULT_CONTEXT_TOKENS = 1_100_000;
export const DEFAULT_MAX_OUTPUT_TOKENS = 128_000;

/**
 * Where the default catalog's models are served: the OpenAI-compatible providers of UPSTREAM_BASE_URL (and of
 * IMAGE_/DECISION_/EMBEDDINGS_UPSTREAM_BASE_URL where set apart), each model under its own id. None: the catalog is
 * read for its prices only.
 */
export interface DefaultRoutes {
  chat?: Omit<Route, "model">;
  image?: Omit<Route, "model">;
  decision?: Omit<Route, "model">;
  embeddings?: Omit<Route, "model">;
}

const routesOf = (route: Omit<Route, "model"> | undefined, model: string): Route[] =>
  route ? [{ ...route, model }] : [];

/** The spec's tables, written exactly as the spec writes them (USD per 1,000,000 tokens; USD per image). */
export function defaultCatalog(routes: DefaultRoutes = {}): ModelCatalog {
  const chat = (id: string, inputUsdPerMillion: string, outputUsdPerMillion: string): ChatModel => ({
    id,
    inputUsdPerMillion,
    outputUsdPerMillion,
    contextTokens: DEFAULT_CONTEXT_TOKENS,
    maxOutputTokens: DEFAULT_MAX_OUTPUT_TOKENS,
    // The spec's chat models read images, counted by OpenAI's tiles.
    vision: { formula: "tiles", ...VISION_DEFAULTS.tiles },
    routes: routesOf(routes.chat, id),
  });
  const image = (id: string, size: string, usdPerImage: string): ImageModel => ({
    id,
    sizes: [size],
    usdPerImage,
    routes: routesOf(routes.image ?? routes.chat, id),
  });
  return {
    chat: [
      chat("vendor-a/gpt-5.6-sol", "2.80", "14.00"),
      chat("vendor-a/gpt-5.6-terra", "1.40", "8.40"),
      chat("vendor-a/gpt-6-luna", "0.07", "0.35"),
      chat("vendor-a/gpt-6-sol", "1.40", "7.00"),
    ],
    images: [
      image("gpt-image-2", "1024x1024", "0.02"),
      image("gpt-image-2.5", "1024x1024", "0.04"),
      image("gpt-image-2.5-flare", "1024x1024", "0.04"),
      image("gpt-image-2.5-sunburst", "1024x1024", "0.04"),
      image("vendor-c-imagine-image", "1024x1024", "0.045"),
      image("gpt-image-2-2k", "2048x2048", "0.09"),
      image("gpt-image-2.5-sunburst-2k", "2048x2048", "0.22"),
    ],
    decision: {
      id: "jev-latest",
      inputUsdPerMillion: "0.12",
      outputUsdPerMillion: "0",
      routes: routesOf(routes.decision ?? routes.chat, "jev-latest"),
    },
    embeddings: {
      id: "vendor-b/nemotron-3-embed-1b",
      routes: routesOf(routes.embeddings ?? routes.chat, "vendor-b/nemotron-3-embed-1b"),
    },
    freeChat: { id: "vendor-b/gpt-oss-20b", routes: routesOf(routes.chat, "vendor-b/gpt-oss-20b") },
  };
}

import type { LimitFields } from "../rate-limits";
import type { VisionPricing } from "./vision";

/**
 * The catalog in force: every model the deployment sells or serves free, its prices and limits, and the ordered
 * routes (providers) that serve it. Every price the service quotes, lists or documents is computed from it. Prices
 * are decimal USD strings, exactly as written, converted to atomic units without floating point.
 */

/**
 * The APIs a route may speak: OpenAI's chat completions (the canonical wire, which every route of a chat model is
 * sent unless it speaks the caller's API natively), OpenAI's Responses, Anthropic's Messages.
 */
export const providerApis = ["chat", "responses", "messages"] as const;
export type ProviderApi = (typeof providerApis)[number];

/** One provider that can serve a model, tried in the catalog's order. */
export interface Route {
  /** The provider's name: metrics, /health, the X-Paysvc-Provider header and its circuit breaker go by it. */
  provider: string;
  /** OpenAI-compatible base URL, such as https://api.openai.com/v1. */
  baseUrl: string;
  /** The variable the API key was read from (named in messages, never the key); undefined: no key is sent. */
  apiKeyVariable?: string;
  apiKey?: string;
  /** The provider's own id of the model: what it is sent, whatever the caller asked for. */
  model: string;
  /** Extra request headers the provider wants (an organisation, an API version). */
  headers: Readonly<Record<string, string>>;
  /**
   * The API the route speaks at its base URL: a call in that API is passed through to it as it came; any other is
   * sent as a chat completion (the default, "chat"). A chat completion route must speak chat.
   */
  api?: ProviderApi;
}

interface SoldModel {
  id: string;
  /** Empty only in a catalog read for its prices (`paysvc quote`); a serving process refuses it. */
  routes: readonly Route[];
}

/** A model sold for chat completions, Responses and prepaid keys; rates in USD per 1,000,000 tokens. */
export interface ChatModel extends SoldModel {
  inputUsdPerMillion: string;
  outputUsdPerMillion: string;
  contextTokens: number;
  maxOutputTokens: number;
  /** Other names callers may send for it (the catalog's `aliases`): a call naming one is a call of this model. */
  aliases?: readonly string[];
  /** Its own rate limits for keys and wallets (the catalog's `rate_limits`), in place of the deployment's. */
  rateLimits?: { key?: LimitFields; wallet?: LimitFields };
  /** Whether it reads images, and how its provider counts them (the catalog's `vision`); undefined: text only. */
  vision?: VisionPricing;
}

/** An image model: the price per image, the same for each of its sizes (USD, before the settlement overhead). */
export interface ImageModel extends SoldModel {
  sizes: readonly string[];
  usdPerImage: string;
}

/** The structured-decision model: input tokens at one rate, output free. */
export interface DecisionModel extends SoldModel {
  inputUsdPerMillion: string;
  outputUsdPerMillion: "0";
}

/** A model served free (embeddings, the free chat). */
export type FreeModel = SoldModel;

export interface ModelCatalog {
  chat: readonly ChatModel[];
  images: readonly ImageModel[];
  decision: DecisionModel;
  embeddings: FreeModel;
  freeChat: FreeModel;
}

export const catalogKinds = ["chat", "image", "decision", "embeddings", "free_chat"] as const;
export type CatalogKind = (typeof catalogKinds)[number];

/** The chat model sold under `name`: its id, or one of its aliases. */
export function findChatModel(catalog: ModelCatalog, name: string): ChatModel | undefined {
  return catalog.chat.find((model) => model.id === name) ?? catalog.chat.find((model) => model.aliases?.includes(name));
}

export function findImageModel(catalog: ModelCatalog, id: string): ImageModel | undefined {
  return catalog.images.find((model) => model.id === id);
}

/** Every model of the catalog with its kind, in the catalog's order. */
export function catalogModels(catalog: ModelCatalog): { kind: CatalogKind; model: SoldModel }[] {
  return [
    ...catalog.chat.map((model) => ({ kind: "chat" as const, model })),
    ...catalog.images.map((model) => ({ kind: "image" as const, model })),
    { kind: "decision", model: catalog.decision },
    { kind: "embeddings", model: catalog.embeddings },
    { kind: "free_chat", model: catalog.freeChat },
  ];
}

/** Each provider once, with the base URL it is at (the catalog gives one provider one base URL). */
export function catalogProviders(catalog: ModelCatalog): { provider: string; route: Route }[] {
  const seen = new Map<string, Route>();
  for (const { model } of catalogModels(catalog)) {
    for (const route of model.routes) if (!seen.has(route.provider)) seen.set(route.provider, route);
  }
  return [...seen].map(([provider, route]) => ({ provider, route }));
}

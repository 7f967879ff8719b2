import { z } from "zod";
import { findChatModel, type ChatModel, type ModelCatalog } from "../../config/catalog/model-catalog";
import { prepaidPacks } from "../../config/prepaid-packs";
import { parseOrThrow, requireJsonObject } from "../core/validation";
import { keyLimitsSchema, type KeyLimits } from "../limits/key-limits";

const TOKENS_RULE = `an integer from ${prepaidPacks.minTokens} to ${prepaidPacks.maxTokens} in steps of ${prepaidPacks.stepTokens}`;

/** The model a pack defaults to: the spec's, where the catalog sells it, else the catalog's first chat model. */
export function defaultPackModel(catalog: ModelCatalog): string {
  return findChatModel(catalog, prepaidPacks.defaultModel)?.id ?? catalog.chat[0]!.id;
}

/**
 * A purchase of one of the catalog's chat models: its schema, built once, and the parser that checks with it.
 * Endpoint 8 needs both fields; endpoint 9 (`withDefaults`) fills what is missing, even the whole body.
 */
export function purchaseRequests(catalog: ModelCatalog) {
  const ids = catalog.chat.map((model) => model.id) as [string, ...string[]];
  const schema = purchaseFields(z.enum(ids, { error: `must be one of ${ids.join(", ")}` }));
  const defaults = { model: defaultPackModel(catalog), tokens: prepaidPacks.defaultTokens };
  const parse = (value: unknown, withDefaults: boolean): PrepaidPurchase => {
    const body = value === undefined && withDefaults ? {} : value;
    requireJsonObject(body);
    const purchase = parseOrThrow(schema, withDefaults ? { ...defaults, ...body } : body);
    return { model: findChatModel(catalog, purchase.model)!, tokens: purchase.tokens, limits: purchase.limits };
  };
  return { schema, parse };
}

/** A top-up of a key: the key (its id), its model and the tokens to add, a pack's tokens. */
export function topUpRequests(catalog: ModelCatalog) {
  const { schema: purchase } = purchaseRequests(catalog);
  const schema = purchase.omit({ limits: true }).extend({ key: z.number().int().positive() });
  const parse = (value: unknown): PrepaidTopUp => {
    requireJsonObject(value);
    const { key, model, tokens } = parseOrThrow(schema, value);
    return { key, model: findChatModel(catalog, model)!, tokens };
  };
  return { schema, parse };
}

export interface PrepaidTopUp {
  key: number;
  model: ChatModel;
  tokens: number;
}

const purchaseFields = (model: z.ZodType<string>) =>
  z.object({
    model,
    tokens: z
      .number({ error: `must be ${TOKENS_RULE}` })
      .int(`must be ${TOKENS_RULE}`)
      .min(prepaidPacks.minTokens, `must be ${TOKENS_RULE}`)
      .max(prepaidPacks.maxTokens, `must be ${TOKENS_RULE}`)
      .multipleOf(prepaidPacks.stepTokens, `must be ${TOKENS_RULE}`),
    // Lower rate limits for the key than the deployment's (each optional); higher ones change nothing.
    limits: keyLimitsSchema.optional(),
  });

export interface PrepaidPurchase {
  model: ChatModel;
  tokens: number;
  limits?: KeyLimits;
}

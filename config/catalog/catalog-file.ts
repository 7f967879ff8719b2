import { limitFields } from "../rate-limits";
import { z } from "zod";
import { chatLimits } from "../limits";
import { catalogKinds, providerApis } from "./model-catalog";
import { visionEntry } from "./vision";

/**
 * An operator's catalog file (PAYSVC_CATALOG), in JSON. `"extends": "default"` starts from the spec's tables (an
 * entry with a default model's id replaces it; a decision, embeddings or free chat entry replaces the default one
 * of its kind); without it the file is the whole catalog.
 */

/** At most 6 decimals: USDC's, so every price converts to whole atomic units. */
const usd = z
  .string({ error: 'must be a decimal USD amount written as a string, such as "0.07"' })
  .regex(/^\d+(\.\d{1,6})?$/, 'must be a decimal USD amount such as "0.07", with at most 6 decimals');

/**
 * A sold model's price: never zero. A free rate would give its upstream's work away, and a prepaid key's tokens are
 * priced at a chat model's input rate, so a key of that model would cost nothing; a model served free is the
 * free_chat entry.
 */
const price = usd.refine(
  (value) => !/^0+(\.0{1,6})?$/.test(value),
  "must be above zero: a sold model is paid for (a prepaid key's tokens are priced at a chat model's input rate, so a zero rate gives keys away); serve a free model as the free_chat entry",
);

function isHttpUrl(value: string): boolean {
  try {
    return ["http:", "https:"].includes(new URL(value).protocol);
  } catch {
    return false;
  }
}

const positiveInteger = z.number({ error: "must be a whole number" }).int("must be a whole number").positive();

/** The largest request the service accepts: chatLimits.maxInputTokens of input and maxOutputTokens of output. */
const MAX_CONTEXT_TOKENS = chatLimits.maxInputTokens + chatLimits.maxOutputTokens;
const chatModelLimits = z.strictObject({
  context_tokens: positiveInteger.max(
    MAX_CONTEXT_TOKENS,
    `must be at most ${MAX_CONTEXT_TOKENS}: a request holds at most ${chatLimits.maxInputTokens} input and ${chatLimits.maxOutputTokens} output tokens, so a larger window could never be used`,
  ),
  max_output_tokens: positiveInteger.max(
    chatLimits.maxOutputTokens,
    `must be at most ${chatLimits.maxOutputTokens}: the most max_tokens a request may ask for`,
  ),
});

/**
 * The headers the upstream client writes itself (the key as Bearer, the body's type and length, the host); one
 * given again would be sent twice or fight it.
 */
const RESERVED_HEADERS = ["authorization", "content-type", "content-length", "host", "transfer-encoding"];
/** RFC 9110's token: what a header name may be made of. */
const HTTP_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const headers = z.record(z.string(), z.string({ error: "must be a string" })).superRefine((value, context) => {
  for (const [name, text] of Object.entries(value)) {
    const problem = !HTTP_TOKEN.test(name)
      ? "is not a header name (letters, digits and !#$%&'*+-.^_`|~ only)"
      : RESERVED_HEADERS.includes(name.toLowerCase())
        ? `is set by the upstream client itself (${RESERVED_HEADERS.join(", ")}); the key goes in api_key_env`
        : /[\r\n\0]/.test(text)
          ? "has a value with a line break or NUL, which would end the header; remove it"
          : undefined;
    if (problem) context.addIssue({ code: "custom", path: [name], message: problem });
  }
});

const route = z.strictObject({
  provider: z
    .string({ error: "must name the provider, such as openai" })
    .regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, "must be a name of lowercase letters, digits, '.', '_' or '-'"),
  base_url: z
    .string({ error: "must be the provider's base URL" })
    .refine(isHttpUrl, "must be an absolute http(s) URL such as https://api.openai.com/v1")
    .transform((value) => value.replace(/\/+$/, "")),
  api_key_env: z
    .string()
    .regex(/^[A-Z_][A-Z0-9_]*$/, "must be the name of an environment variable, such as OPENAI_API_KEY")
    .optional(),
  model: z.string({ error: "must be the provider's own id of the model" }).min(1, "must not be empty"),
  headers: headers.optional(),
  api: z
    .enum(providerApis, {
      error: `must be one of ${providerApis.join(", ")} (the API the route speaks; chat if left out)`,
    })
    .optional(),
});

const sold = {
  id: z.string({ error: "must be the id callers use" }).min(1).max(128, "must be at most 128 characters"),
  routes: z.array(route).min(1, "must list at least one route (the providers that serve the model, in order)"),
};

/**
 * Other names callers may use for a chat model: coding agents send the model they are configured with (Claude Code
 * a Claude name, Codex a GPT one), and the operator maps such names to a model sold here.
 */
const aliases = z
  .array(
    z
      .string({ error: "must be a model name callers send, such as claude-sonnet-4-5" })
      .min(1, "must not be empty")
      .max(128, "must be at most 128 characters"),
    { error: "must be a list of model names" },
  )
  .max(32, "must list at most 32 names");

const entry = z.discriminatedUnion(
  "kind",
  [
    z.strictObject({
      ...sold,
      kind: z.literal("chat"),
      prices: z.strictObject({ input_per_1m: price, output_per_1m: price }),
      limits: chatModelLimits.optional(),
      aliases: aliases.optional(),
      // This model's own rate limits, in place of the deployment's (RATE_LIMIT_*) for its calls; 0 turns one off.
      rate_limits: z.strictObject({ key: limitFields(0).optional(), wallet: limitFields(0).optional() }).optional(),
      // Whether it reads images and how its provider counts them (vision.ts); left out: text only.
      vision: visionEntry.optional(),
    }),
    z.strictObject({
      ...sold,
      kind: z.literal("image"),
      prices: z.strictObject({ per_image: price }),
      limits: z.strictObject({
        sizes: z
          .array(z.string().regex(/^\d{2,5}x\d{2,5}$/, "must be a size such as 1024x1024"))
          .min(1, "must list at least one size"),
      }),
    }),
    z.strictObject({ ...sold, kind: z.literal("decision"), prices: z.strictObject({ input_per_1m: price }) }),
    z.strictObject({ ...sold, kind: z.literal("embeddings") }),
    z.strictObject({ ...sold, kind: z.literal("free_chat") }),
  ],
  { error: `must be one of ${catalogKinds.join(", ")}` },
);

export const catalogFileSchema = z.strictObject({
  extends: z
    .literal("default", { error: 'must be "default" (start from the spec\'s tables), or be left out' })
    .optional(),
  models: z.array(entry, { error: "must be a list of models" }),
});

export type CatalogFile = z.output<typeof catalogFileSchema>;
export type CatalogEntry = CatalogFile["models"][number];
export type CatalogFileRoute = z.output<typeof route>;

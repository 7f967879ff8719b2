import { z } from "zod";
import { gptModelIds } from "../../config/models";
import { prepaidPacks } from "../../config/prepaid-packs";
import { parseOrThrow, requireJsonObject } from "../validation";

const TOKENS_RULE = `an integer from ${prepaidPacks.minTokens} to ${prepaidPacks.maxTokens} in steps of ${prepaidPacks.stepTokens}`;

export const purchaseSchema = z.object({
  model: z.enum(gptModelIds as [string, ...string[]], { error: `must be one of ${gptModelIds.join(", ")}` }),
  tokens: z
    .number({ error: `must be ${TOKENS_RULE}` })
    .int(`must be ${TOKENS_RULE}`)
    .min(prepaidPacks.minTokens, `must be ${TOKENS_RULE}`)
    .max(prepaidPacks.maxTokens, `must be ${TOKENS_RULE}`)
    .multipleOf(prepaidPacks.stepTokens, `must be ${TOKENS_RULE}`),
});

export type PrepaidPurchase = z.output<typeof purchaseSchema>;

/** Endpoint 8 needs both fields; endpoint 9 (`withDefaults`) fills what is missing, even the whole body. */
export function parsePrepaidPurchase(value: unknown, withDefaults: boolean): PrepaidPurchase {
  const body = value === undefined && withDefaults ? {} : value;
  requireJsonObject(body);
  const filled = withDefaults
    ? { model: prepaidPacks.defaultModel, tokens: prepaidPacks.defaultTokens, ...body }
    : body;
  return parseOrThrow(purchaseSchema, filled);
}

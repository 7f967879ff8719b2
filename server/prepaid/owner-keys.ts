import { z } from "zod";
import type { WalletSignInContext } from "../auth/signed-in-wallet";
import { withWallet } from "../auth/with-principal";
import { ApiError } from "../core/errors";
import { jsonAnswer, type ApiAnswer } from "../http/api-answer";
import type { ApiRequest } from "../http/api-request";
import { readJsonBody } from "../http/read-json-body";
import { describeRule, keyLimitsSchema, parseKeyLimits, type KeyLimits } from "../limits/key-limits";
import type { RateLimiter } from "../limits/rate-limiter";
import { usableKeyStatuses, type KeyRecord, type OwnedKeyStore } from "./owned-keys";
import { newPrepaidCode } from "./prepaid-code";

/** What the owner's endpoints reach. */
export interface OwnerContext extends WalletSignInContext {
  ownedKeys: OwnedKeyStore;
  limits: RateLimiter;
}

/** A key as its owner sees it: never its code. */
export function keyView(key: KeyRecord, limits: RateLimiter) {
  const reserved = Math.max(0, key.reservedTokens);
  return {
    object: "prepaid_key",
    id: key.id,
    code_prefix: key.codePrefix,
    model: key.model,
    status: key.status,
    tokens: {
      total: key.totalTokens,
      used: key.usedTokens,
      reserved,
      remaining: Math.max(0, key.totalTokens - key.usedTokens - reserved),
    },
    limits: describeRule(limits.keyRuleWith(parseKeyLimits(key.limits))),
    created_at: Math.floor(key.createdAt.getTime() / 1000),
    last_used_at: key.lastUsedAt ? Math.floor(key.lastUsedAt.getTime() / 1000) : null,
  };
}

const noStore = { headers: { "Cache-Control": "no-store" } };

/** GET /v1/prepaid/keys: the signed-in wallet's keys, newest first. */
export const listOwnedKeys = withWallet(async (context: OwnerContext, _request, wallet): Promise<ApiAnswer> => {
  const keys = await context.ownedKeys.list({ owner: wallet.address });
  return jsonAnswer(
    { object: "list", owner: wallet.address, data: keys.map((key) => keyView(key, context.limits)) },
    noStore,
  );
});

const keyChoice = z.object({ key: z.number().int().positive() });
const limitsChange = keyChoice.extend({ limits: keyLimitsSchema });

/** The body of an owner's change, read after the sign-in (an unsigned request is not worth reading). */
async function changeOf<T>(request: ApiRequest, schema: z.ZodType<T>): Promise<T> {
  const parsed = schema.safeParse((await readJsonBody(request, 4096)).value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ApiError("invalid_request", `${issue.path.join(".") || "body"}: ${issue.message}`, {
      param: issue.path.join(".") || undefined,
    });
  }
  return parsed.data;
}

const notFound = (id: number, owner: string) => `No usable prepaid key ${id} of ${owner}.`;

/**
 * The wallet's key `id` if it is usable (active or used up); else 404 `not_found` saying `why` (a key of another
 * wallet, a revoked one, none).
 */
export async function usableKey(
  store: OwnedKeyStore,
  id: number,
  owner: string,
  why = notFound(id, owner),
): Promise<KeyRecord> {
  const [key] = await store.list({ id, owner });
  if (!key || !(usableKeyStatuses as readonly string[]).includes(key.status)) {
    throw new ApiError("not_found", why, { param: "key" });
  }
  return key;
}

/** One of the wallet's keys as a change left it; 404 when the change found no usable key of the wallet's. */
async function changed(context: OwnerContext, done: boolean, id: number, owner: string) {
  const [key] = done ? await context.ownedKeys.list({ id, owner }) : [];
  if (!key) throw new ApiError("not_found", notFound(id, owner), { param: "key" });
  return keyView(key, context.limits);
}

/** POST /v1/prepaid/keys/rotate: a new code for the key (shown once); the old one is refused at once. */
export const rotateOwnedKey = withWallet(async (context: OwnerContext, request, wallet): Promise<ApiAnswer> => {
  const { key } = await changeOf(request, keyChoice);
  const code = newPrepaidCode();
  const done = await context.ownedKeys.rotate(key, wallet.address, code);
  return jsonAnswer({ ...(await changed(context, done, key, wallet.address)), code }, noStore);
});

/** POST /v1/prepaid/keys/revoke: the key is refused from now on, on every instance; its tokens left stay on record. */
export const revokeOwnedKey = withWallet(async (context: OwnerContext, request, wallet): Promise<ApiAnswer> => {
  const { key } = await changeOf(request, keyChoice);
  const done = await context.ownedKeys.revoke(key, wallet.address);
  return jsonAnswer(await changed(context, done, key, wallet.address), noStore);
});

/**
 * POST /v1/prepaid/keys/limits: lowers the key's own limits. Each limit given is kept where it is lower than the
 * key's own (a limit can be lowered, never raised); the deployment's still apply over them.
 */
export const lowerOwnedKeyLimits = withWallet(async (context: OwnerContext, request, wallet): Promise<ApiAnswer> => {
  const { key, limits } = await changeOf(request, limitsChange);
  const current = await usableKey(context.ownedKeys, key, wallet.address);
  const lowered = lowerOnly(parseKeyLimits(current.limits) ?? {}, limits);
  const done = await context.ownedKeys.setLimits(key, wallet.address, JSON.stringify(lowered));
  return jsonAnswer(await changed(context, done, key, wallet.address), noStore);
});

/** Each limit the lower of what was set and what is asked. */
export function lowerOnly(current: KeyLimits, asked: KeyLimits): KeyLimits {
  const lowered: KeyLimits = { ...current };
  for (const name of ["requests_per_minute", "tokens_per_minute", "concurrent"] as const) {
    const value = asked[name];
    if (value === undefined) continue;
    const was = current[name];
    lowered[name] = was === undefined ? value : Math.min(was, value);
  }
  return lowered;
}

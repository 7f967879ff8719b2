import { and, eq, inArray, sql, type Column, type SQL } from "drizzle-orm";
import { hashPrepaidCode } from "../prepaid/prepaid-code";
import { CODE_PREFIX_LENGTH, soldKeyStatuses, usableKeyStatuses, type KeyFilter } from "../prepaid/owned-keys";

/** The columns of `prepaid_keys` the owners' queries read, the same on both engines' schemas. */
interface KeyColumns {
  id: Column;
  codePrefix: Column;
  owner: Column;
  model: Column;
  status: Column;
  totalTokens: Column;
  usedTokens: Column;
  reservedTokens: Column;
  limits: Column;
  createdAt: Column;
  lastUsedAt: Column;
}

/**
 * The owners' and the operator's queries of keys (owned-keys.ts), written once over either engine's table: what a
 * key record selects, which keys a list or a change finds, and what each change writes. The engines' stores run them.
 */
export function ownedKeyQueries<T extends KeyColumns>(table: T) {
  const record = {
    id: table.id as T["id"],
    codePrefix: table.codePrefix as T["codePrefix"],
    owner: table.owner as T["owner"],
    model: table.model as T["model"],
    status: table.status as T["status"],
    totalTokens: table.totalTokens as T["totalTokens"],
    usedTokens: table.usedTokens as T["usedTokens"],
    reservedTokens: table.reservedTokens as T["reservedTokens"],
    limits: table.limits as T["limits"],
    createdAt: table.createdAt as T["createdAt"],
    lastUsedAt: table.lastUsedAt as T["lastUsedAt"],
  };

  /**
   * Keys whose kept prefix starts with `prefix` (compared exactly: LIKE would read `_`, a base64url character, as a
   * wildcard, and ignore case); a longer text (a whole code) is compared by its first characters.
   */
  const startsWith = (prefix: string): SQL => {
    const kept = prefix.slice(0, CODE_PREFIX_LENGTH);
    return sql`substr(${table.codePrefix}, 1, ${kept.length}) = ${kept}`;
  };

  /** The keys sold that `filter` names. */
  const sold = (filter: KeyFilter): SQL => {
    const conditions = [inArray(table.status, [...soldKeyStatuses])];
    if (filter.id !== undefined) conditions.push(eq(table.id, filter.id));
    if (filter.owner !== undefined) conditions.push(eq(table.owner, filter.owner));
    if (filter.codePrefix !== undefined) conditions.push(startsWith(filter.codePrefix));
    return and(...conditions)!;
  };

  /** The key an owner (or, undefined, the operator) may change: this one, usable, its own (of `model`, if given). */
  const usable = (id: number, owner: string | undefined, model?: string): SQL => {
    const conditions = [eq(table.id, id), inArray(table.status, [...usableKeyStatuses])];
    if (owner !== undefined) conditions.push(eq(table.owner, owner));
    if (model !== undefined) conditions.push(eq(table.model, model));
    return and(...conditions)!;
  };

  /** What each change writes on the key's row. */
  const changes = {
    rotate: (code: string) => ({
      codeHash: hashPrepaidCode(code),
      codePrefix: code.slice(0, CODE_PREFIX_LENGTH),
      updatedAt: new Date(),
    }),
    revoke: () => ({ status: "revoked" as const, updatedAt: new Date() }),
    // A used-up key is active again.
    topUp: (tokens: number) => ({
      totalTokens: sql`${table.totalTokens} + ${tokens}`,
      status: sql`case when ${table.status} = 'disabled' then 'active' else ${table.status} end`,
      updatedAt: new Date(),
    }),
    limits: (limits: string | null) => ({ limits, updatedAt: new Date() }),
  };

  return { record, sold, usable, changes };
}

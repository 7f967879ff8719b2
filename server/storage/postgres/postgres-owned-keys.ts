import { and, desc, eq, inArray, sql, type SQL } from "drizzle-orm";
import { hashPrepaidCode } from "../../prepaid/prepaid-code";
import {
  CODE_PREFIX_LENGTH,
  soldKeyStatuses,
  usableKeyStatuses,
  type KeyFilter,
  type KeyRecord,
  type OwnedKeyStore,
} from "../../prepaid/owned-keys";
import type { PostgresDatabase } from "./open-postgres";
import { prepaidKeys } from "./schema";

const record = {
  id: prepaidKeys.id,
  codePrefix: prepaidKeys.codePrefix,
  owner: prepaidKeys.owner,
  model: prepaidKeys.model,
  status: prepaidKeys.status,
  totalTokens: prepaidKeys.totalTokens,
  usedTokens: prepaidKeys.usedTokens,
  reservedTokens: prepaidKeys.reservedTokens,
  limits: prepaidKeys.limits,
  createdAt: prepaidKeys.createdAt,
  lastUsedAt: prepaidKeys.lastUsedAt,
};

/** The keys an owner (or, undefined, the operator) may change: this one, usable, and its own. */
function usableKey(id: number, owner: string | undefined): SQL {
  const conditions = [eq(prepaidKeys.id, id), inArray(prepaidKeys.status, [...usableKeyStatuses])];
  if (owner !== undefined) conditions.push(eq(prepaidKeys.owner, owner));
  return and(...conditions)!;
}

/**
 * Keys whose kept prefix starts with `prefix` (compared exactly: LIKE would read `_`, a base64url character, as a
 * wildcard, and ignore case); a longer text (a whole code) is compared by its first characters.
 */
export function startsWith(prefix: string): SQL {
  const kept = prefix.slice(0, CODE_PREFIX_LENGTH);
  return sql`substr(${prepaidKeys.codePrefix}, 1, ${kept.length}) = ${kept}`;
}

/** Keys changed by their owners or the operator on PostgreSQL (owned-keys.ts). */
export class PostgresOwnedKeys implements OwnedKeyStore {
  constructor(private readonly database: PostgresDatabase) {}

  async list(filter: KeyFilter, limit = 1000): Promise<KeyRecord[]> {
    const conditions = [inArray(prepaidKeys.status, [...soldKeyStatuses])];
    if (filter.id !== undefined) conditions.push(eq(prepaidKeys.id, filter.id));
    if (filter.owner !== undefined) conditions.push(eq(prepaidKeys.owner, filter.owner));
    if (filter.codePrefix !== undefined) conditions.push(startsWith(filter.codePrefix));
    return this.database
      .select(record)
      .from(prepaidKeys)
      .where(and(...conditions))
      .orderBy(desc(prepaidKeys.id))
      .limit(limit);
  }

  async rotate(id: number, owner: string | undefined, code: string): Promise<boolean> {
    const changed = await this.database
      .update(prepaidKeys)
      .set({ codeHash: hashPrepaidCode(code), codePrefix: code.slice(0, CODE_PREFIX_LENGTH), updatedAt: new Date() })
      .where(usableKey(id, owner))
      .returning({ id: prepaidKeys.id });
    return changed.length > 0;
  }

  async revoke(id: number, owner: string | undefined): Promise<boolean> {
    const changed = await this.database
      .update(prepaidKeys)
      .set({ status: "revoked", updatedAt: new Date() })
      .where(usableKey(id, owner))
      .returning({ id: prepaidKeys.id });
    return changed.length > 0;
  }

  async topUp(id: number, owner: string, model: string, tokens: number): Promise<boolean> {
    const changed = await this.database
      .update(prepaidKeys)
      .set({
        totalTokens: sql`${prepaidKeys.totalTokens} + ${tokens}`,
        status: sql`case when ${prepaidKeys.status} = 'disabled' then 'active' else ${prepaidKeys.status} end`,
        updatedAt: new Date(),
      })
      .where(and(usableKey(id, owner), eq(prepaidKeys.model, model)))
      .returning({ id: prepaidKeys.id });
    return changed.length > 0;
  }

  async setLimits(id: number, owner: string | undefined, limits: string | null): Promise<boolean> {
    const changed = await this.database
      .update(prepaidKeys)
      .set({ limits, updatedAt: new Date() })
      .where(usableKey(id, owner))
      .returning({ id: prepaidKeys.id });
    return changed.length > 0;
  }
}

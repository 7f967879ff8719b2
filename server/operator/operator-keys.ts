import { walletOwner } from "../auth/principal";
import type { KeyRecord, OwnedKeyStore } from "../prepaid/owned-keys";

/** What the operator's keys card was asked for (the page's query): a key by id, a wallet's keys, a code prefix. */
export interface KeysQuery {
  key?: string;
  owner?: string;
  prefix?: string;
  /** The outcome of a revocation just made ("1" revoked, "0" not usable). */
  revoked?: string;
}

/** How many keys the card lists at most. */
const KEYS_SHOWN = 50;

export interface OperatorKeys {
  query: KeysQuery;
  keys: KeyRecord[];
  /** A sentence on the revocation just made, if one was. */
  outcome?: string;
}

/** The keys the card shows: those asked for, else the newest sold; what `paysvc keys list` reads. */
export async function operatorKeys(store: OwnedKeyStore, query: KeysQuery): Promise<OperatorKeys> {
  const id = Number(query.key);
  const keys = await store.list(
    {
      ...(Number.isSafeInteger(id) && id > 0 ? { id } : {}),
      ...(query.owner?.trim() ? { owner: walletOwner(query.owner.trim()) } : {}),
      ...(query.prefix?.trim() ? { codePrefix: query.prefix.trim() } : {}),
    },
    KEYS_SHOWN,
  );
  const outcome =
    query.revoked === "1"
      ? `Key ${query.key} is revoked: its next call is refused on every instance.`
      : query.revoked === "0"
        ? `Key ${query.key} was not revoked: it is not an active or used-up key.`
        : undefined;
  return { query, keys, outcome };
}

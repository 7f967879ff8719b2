import type { Command } from "commander";
import { loadLedgerConfig } from "../../config/ledger-config";
import { walletOwner } from "../../server/auth/principal";
import type { KeyFilter, KeyRecord } from "../../server/prepaid/owned-keys";
import { openStorage } from "../../server/storage/open-storage";
import type { Storage } from "../../server/storage/storage";
import { action, print, table } from "../lib/output";

interface ListOptions {
  owner?: string;
  prefix?: string;
  limit: string;
  json?: boolean;
}

/** `paysvc keys`: the operator's view of the prepaid keys sold, and a way to revoke one (DATABASE_URL, NETWORK). */
export function registerKeysCommand(program: Command): void {
  const keys = program
    .command("keys")
    .description("The prepaid keys sold: list, show and revoke them (DATABASE_URL and NETWORK, as the app reads them)");
  keys
    .command("list")
    .description("Keys sold, newest first (never their codes: only their first characters)")
    .option("--owner <wallet>", "only the keys this wallet paid for")
    .option("--prefix <code>", "only the keys whose code starts so (paysvc_pk_ and a few characters)")
    .option("--limit <n>", "at most this many", "100")
    .option("--json", "print JSON")
    .addHelpText(
      "after",
      "\nExamples:\n  $ paysvc keys list --owner 0x3C44...93BC\n  $ paysvc keys list --prefix paysvc_pk_Ab3 --json",
    )
    .action(
      action(async (options: ListOptions) => {
        const limit = Number(options.limit);
        if (!Number.isInteger(limit) || limit < 1)
          throw new Error(`--limit: a positive integer, not "${options.limit}"`);
        const filter: KeyFilter = {};
        if (options.owner) filter.owner = walletOwner(options.owner);
        if (options.prefix) filter.codePrefix = options.prefix;
        const found = await withStorage((storage) => storage.ownedKeys.list(filter, limit));
        print(options.json === true, found.map(keyJson), () => keyTable(found));
      }),
    );
  keys
    .command("show <key>")
    .description("One key, by its id or the first characters of its code")
    .option("--json", "print JSON")
    .action(
      action(async (key: string, options: { json?: boolean }) => {
        const found = await withStorage((storage) => storage.ownedKeys.list(filterOf(key), 2));
        if (found.length === 0) throw new Error(`no key ${key}`);
        if (found.length > 1) throw new Error(`${key} names more than one key: give more of its code, or its id`);
        print(options.json === true, keyJson(found[0]!), () => keyTable(found));
      }),
    );
  keys
    .command("revoke <key>")
    .description("Revokes a key (by id or code prefix) for good: the next call with it is refused on every instance")
    .action(
      action(async (key: string) => {
        await withStorage(async (storage) => {
          const found = await storage.ownedKeys.list(filterOf(key), 2);
          if (found.length !== 1)
            throw new Error(found.length === 0 ? `no key ${key}` : `${key} names more than one key`);
          const target = found[0]!;
          if (!(await storage.ownedKeys.revoke(target.id, undefined))) {
            throw new Error(`key ${target.id} is ${target.status}: only an active or used-up key is revoked`);
          }
          console.log(
            `revoked key ${target.id} (${target.codePrefix ?? "no prefix kept"}), owner ${target.owner ?? "unknown"}`,
          );
        });
      }),
    );
}

/** A key named by its id (digits) or its code's first characters. */
function filterOf(key: string): KeyFilter {
  return /^\d+$/.test(key) ? { id: Number(key) } : { codePrefix: key };
}

async function withStorage<T>(work: (storage: Storage) => Promise<T>): Promise<T> {
  const config = loadLedgerConfig();
  const storage = await openStorage(config.databaseUrl, { poolSize: 1 });
  try {
    return await work(storage);
  } finally {
    await storage.close();
  }
}

function keyJson(key: KeyRecord) {
  return {
    id: key.id,
    code_prefix: key.codePrefix,
    owner: key.owner,
    model: key.model,
    status: key.status,
    tokens: { total: key.totalTokens, used: key.usedTokens, reserved: key.reservedTokens },
    limits: key.limits ? JSON.parse(key.limits) : null,
    created_at: key.createdAt.toISOString(),
    last_used_at: key.lastUsedAt?.toISOString() ?? null,
  };
}

function keyTable(keys: KeyRecord[]): string {
  if (keys.length === 0) return "no keys";
  const rows = keys.map((key) => [
    String(key.id),
    key.codePrefix ? `${key.codePrefix}...` : "-",
    key.owner ?? "-",
    key.model,
    key.status,
    `${key.usedTokens}/${key.totalTokens}`,
    key.createdAt.toISOString().slice(0, 16).replace("T", " "),
    key.lastUsedAt?.toISOString().slice(0, 16).replace("T", " ") ?? "-",
  ]);
  return table([["id", "code", "owner", "model", "status", "used/total", "created (UTC)", "last used"], ...rows]);
}

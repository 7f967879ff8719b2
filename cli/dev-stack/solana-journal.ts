import { appendFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";

/** One transaction the local validator accepted: enough to land it again, in the same slot, at the next start. */
export interface JournalEntry {
  signature: string;
  slot: bigint;
  /** Unix seconds when it first landed, answered again after a restart. */
  blockTime: number;
  /** null when it succeeded: replaying it must end the same way. */
  err: unknown;
  /** The wire transaction, base64, as it was sent. */
  transaction: string;
}

/**
 * The local Solana validator's state file. LiteSVM's state is rebuilt at each start by the same deterministic
 * setup, so the transactions it accepted since are all that needs keeping: one JSON line each, appended before
 * the RPC answers, so that a validator killed outright loses nothing it confirmed. (litesvm 1.5 can also snapshot
 * itself, but a snapshot is 1.4 MB: not something to write before every answer.)
 */
export class SolanaJournal {
  constructor(readonly file: string) {
    mkdirSync(dirname(file), { recursive: true });
  }

  /** The entries in the order they landed; none when the file does not exist yet. */
  read(): JournalEntry[] {
    if (!existsSync(this.file)) return [];
    const lines = readFileSync(this.file, "utf8").split("\n");
    return lines.flatMap((line, index) => (line.trim() === "" ? [] : [this.parse(line, index + 1)]));
  }

  append(entry: JournalEntry): void {
    const line = JSON.stringify({ ...entry, slot: entry.slot.toString() });
    appendFileSync(this.file, `${line}\n`);
  }

  /** The error that stops the start: the journal does not describe a history this validator can rebuild. */
  unusable(detail: string): Error {
    return new Error(
      `the local Solana validator's journal ${this.file} cannot be replayed (${detail}): remove it to start a new validator`,
    );
  }

  private parse(line: string, lineNumber: number): JournalEntry {
    let entry: Record<string, unknown>;
    try {
      entry = JSON.parse(line) as Record<string, unknown>;
    } catch {
      throw this.unusable(`line ${lineNumber} is not JSON`);
    }
    const { signature, slot, blockTime, err = null, transaction } = entry ?? {};
    if (
      typeof signature !== "string" ||
      typeof slot !== "string" ||
      !/^\d+$/.test(slot) ||
      typeof blockTime !== "number" ||
      typeof transaction !== "string"
    ) {
      throw this.unusable(`line ${lineNumber} is not a journal entry`);
    }
    return { signature, slot: BigInt(slot), blockTime, err, transaction };
  }
}

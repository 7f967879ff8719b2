import type { FailedTransactionMetadata } from "litesvm";

/**
 * A failed transaction's error in the JSON a Solana node answers (`"BlockhashNotFound"`,
 * `{ "InstructionError": [0, { "Custom": 1 }] }`). litesvm's typed errors carry their variant names only as
 * compile-time enums, so the error is read from the Rust Debug text litesvm prints, whose nesting is the same as
 * serde's JSON: unit variants become strings, tuple variants arrays, struct variants objects.
 */
export function transactionError(failure: FailedTransactionMetadata): unknown {
  const debug = /\berr: (.*?), meta: TransactionMetadata\b/s.exec(failure.toString())?.[1];
  if (debug === undefined) return failure.toString();
  try {
    const parser = new DebugParser(debug);
    const value = parser.value();
    return parser.done() ? value : debug;
  } catch {
    return debug;
  }
}

class DebugParser {
  private at = 0;

  constructor(private readonly text: string) {}

  done(): boolean {
    return this.text.slice(this.at).trim() === "";
  }

  value(): unknown {
    this.skipSpaces();
    const literal = /^(-?\d+|"(?:[^"\\]|\\.)*")/.exec(this.text.slice(this.at));
    if (literal) {
      this.at += literal[0].length;
      return JSON.parse(literal[0]);
    }
    const name = this.take(/^[A-Za-z_]\w*/);
    this.skipSpaces();
    if (this.text[this.at] === "(") {
      const items = this.list(")", () => this.value());
      return { [name]: items.length === 1 ? items[0] : items };
    }
    if (this.text[this.at] === "{") {
      const fields = this.list("}", () => {
        const field = this.take(/^\s*[A-Za-z_]\w*\s*:/)
          .replace(":", "")
          .trim();
        return [field, this.value()] as const;
      });
      return { [name]: Object.fromEntries(fields) };
    }
    return name;
  }

  private list<T>(close: string, item: () => T): T[] {
    this.at += 1;
    const items: T[] = [];
    for (;;) {
      this.skipSpaces();
      if (this.text[this.at] === close) break;
      items.push(item());
      this.skipSpaces();
      if (this.text[this.at] === ",") this.at += 1;
      else if (this.text[this.at] !== close) throw new Error(`unexpected text at ${this.at}`);
    }
    this.at += 1;
    return items;
  }

  private take(pattern: RegExp): string {
    const match = pattern.exec(this.text.slice(this.at));
    if (!match) throw new Error(`unexpected text at ${this.at}`);
    this.at += match[0].length;
    return match[0];
  }

  private skipSpaces(): void {
    while (this.text[this.at] === " ") this.at += 1;
  }
}

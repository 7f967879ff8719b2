import { ConfigurationError } from "../../config/configuration-error";

/** How every command prints: JSON when asked, else text; failures are one line on stderr and a non-zero exit. */
export function print(json: boolean, value: unknown, text: () => string): void {
  console.log(
    json ? JSON.stringify(value, (_key, item) => (typeof item === "bigint" ? item.toString() : item), 2) : text(),
  );
}

export function fail(message: string, code = 1): never {
  console.error(`paysvc: ${message.split("\n")[0]}`);
  process.exit(code);
}

/**
 * Runs a command's action, turning any error into one clear line and exit code 1; a configuration that cannot be
 * used, into one line per problem (its message's first line only says that there are problems).
 */
export function action<T extends unknown[]>(run: (...args: T) => Promise<void> | void) {
  return async (...args: T) => {
    try {
      await run(...args);
    } catch (error) {
      if (error instanceof ConfigurationError) {
        for (const problem of error.problems) console.error(`paysvc: ${problem}`);
        process.exit(1);
      }
      fail(error instanceof Error ? error.message : String(error));
    }
  };
}

export function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? "").length))) ?? [];
  return rows
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column] ?? 0))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

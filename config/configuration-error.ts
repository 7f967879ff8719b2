/** A configuration that cannot run: one line per problem, each naming what to set or fix. */
export class ConfigurationError extends Error {
  constructor(public readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join("\n")}`);
    this.name = "ConfigurationError";
  }
}

/** What `load` returns; or its problems added to `problems` (to be reported with the others), and undefined. */
export function collectProblems<T>(problems: string[], load: () => T): T | undefined {
  try {
    return load();
  } catch (error) {
    if (!(error instanceof ConfigurationError)) throw error;
    problems.push(...error.problems);
    return undefined;
  }
}

/** The environment as read: variable names to values. */
export type Environment = Record<string, string | undefined>;

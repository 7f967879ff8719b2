/** A configuration that cannot run: one line per problem, each naming what to set or fix. */
export class ConfigurationError extends Error {
  constructor(public readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join("\n")}`);
    this.name = "ConfigurationError";
  }
}

/** The environment as read: variable names to values. */
export type Environment = Record<string, string | undefined>;

import { ConfigurationError } from "../configuration-error";

/** The problems a configuration loader refuses with, one line each; none when it loads. */
export function problemsOf(load: () => unknown): string[] {
  try {
    load();
  } catch (error) {
    if (error instanceof ConfigurationError) return error.problems;
    throw error;
  }
  return [];
}

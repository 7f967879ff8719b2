import { z } from "zod";

/** Origins whose pages may read the API's answers: any (`*`), or these, each in the form browsers send. */
export type CorsOrigins = "*" | readonly string[];

/**
 * `scheme://host[:port]` in the form a browser's Origin header has it (host lower-cased, default port dropped),
 * or undefined when the text is no http(s) origin: a path, query, user or other scheme is refused, as browsers
 * never send them.
 */
export function parseOrigin(text: string): string | undefined {
  if (!/^https?:\/\/[^/?#@\s]+$/i.test(text)) return undefined;
  try {
    return new URL(text).origin;
  } catch {
    return undefined;
  }
}

const EXPECTED = "must be * or a comma-separated list of origins such as https://a.example, http://localhost:5173";

/** CORS_ORIGINS: `*` (the default) or a comma-separated list of origins. */
export const corsOriginsSchema = z
  .string()
  .trim()
  .default("*")
  .transform((value, context): CorsOrigins => {
    if (value === "*") return "*";
    const entries = value
      .split(",")
      .map((entry) => entry.trim())
      .filter((entry) => entry.length > 0);
    const origins = entries.map(parseOrigin);
    const wrong = entries.find((_, index) => origins[index] === undefined);
    if (wrong !== undefined || entries.length === 0) {
      const detail = wrong === undefined ? "" : `; ${JSON.stringify(wrong)} is not scheme://host[:port] (no path)`;
      context.addIssue({ code: "custom", message: `${EXPECTED}${detail}` });
      return z.NEVER;
    }
    return [...new Set(origins as string[])];
  });

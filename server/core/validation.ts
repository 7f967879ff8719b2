import type { z } from "zod";
import { ApiError } from "./errors";

/** `messages.0.role` -> `messages[0].role`, the way OpenAI names parameters in errors. */
export function paramName(path: readonly PropertyKey[]): string {
  return path.reduce<string>((name, key) => {
    if (typeof key === "number") return `${name}[${key}]`;
    return name ? `${name}.${String(key)}` : String(key);
  }, "");
}

type Issue = z.core.$ZodIssue;

/**
 * For "matches none of the alternatives", the most specific problem: the alternative with the fewest problems
 * (the one the caller most likely meant), and within it the deepest, names the field a caller must fix
 * (`input[0].role` rather than `input`). Without a deeper problem the union's own message stands.
 */
function mostSpecific(issue: Issue): Issue {
  if (issue.code !== "invalid_union" || issue.errors.length === 0) return issue;
  const candidates = issue.errors
    .filter((alternative) => alternative.length > 0)
    .map((alternative) => ({
      count: alternative.length,
      issue: mostSpecific({ ...alternative[0]!, path: [...issue.path, ...alternative[0]!.path] } as Issue),
    }))
    .sort((a, b) => a.count - b.count || b.issue.path.length - a.issue.path.length);
  const best = candidates[0]?.issue;
  return best && best.path.length > issue.path.length ? best : issue;
}

/** The first problem of a failed parse, as the field to name and a message for the caller. */
export function describeProblem(error: z.ZodError): { param: string | null; message: string } {
  const first = error.issues[0];
  const issue = first ? mostSpecific(first) : undefined;
  const param = issue ? paramName(issue.path) : "";
  return {
    param: param || null,
    message: issue ? `Invalid '${param || "body"}': ${issue.message}` : "Invalid request body",
  };
}

/** Every JSON endpoint takes an object; anything else (an array, a string, null) is a 400. */
export function requireJsonObject(value: unknown): asserts value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ApiError("invalid_request", "Request body must be a JSON object", { param: null });
  }
}

/** Parses with a zod schema; the first problem becomes a 400 that names the field. */
export function parseOrThrow<T extends z.ZodType>(schema: T, value: unknown): z.output<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const problem = describeProblem(result.error);
  throw new ApiError("invalid_request", problem.message, { param: problem.param });
}

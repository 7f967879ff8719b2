import type { z } from "zod";
import { ApiError } from "./errors";

/** `messages.0.role` -> `messages[0].role`, the way OpenAI names parameters in errors. */
export function paramName(path: readonly PropertyKey[]): string {
  return path.reduce<string>((name, key) => {
    if (typeof key === "number") return `${name}[${key}]`;
    return name ? `${name}.${String(key)}` : String(key);
  }, "");
}

/** Parses with a zod schema; the first problem becomes a 400 that names the field. */
export function parseOrThrow<T extends z.ZodType>(schema: T, value: unknown): z.output<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const param = issue ? paramName(issue.path) : "";
  const message = issue ? `Invalid '${param || "body"}': ${issue.message}` : "Invalid request body";
  throw new ApiError("invalid_request", message, { param: param || null });
}

import type { AppContext } from "../context/app-context";
import { UpstreamError } from "../upstream/upstream-error";
import type { ParsedImageRequest } from "./image-request";
import type { CallTrace } from "../tracing/call-trace";

/**
 * The images of a paid request, as sent to the caller: the upstream's generation or edit, checked to hold as many
 * usable images as were paid for.
 */
export function createImages(
  context: Pick<AppContext, "providers">,
  parsed: ParsedImageRequest,
  signal: AbortSignal | undefined,
  trace: CallTrace | undefined,
) {
  return callUpstream(context, parsed, signal, trace, (answer) => usableImages(answer, parsed.n));
}

/** The generation or edit, its answer checked by `accept` for each route in turn (too few images: the next). */
function callUpstream<T>(
  context: Pick<AppContext, "providers">,
  parsed: ParsedImageRequest,
  signal: AbortSignal | undefined,
  trace: CallTrace | undefined,
  accept: (answer: Record<string, unknown>) => T,
) {
  const routes = context.providers.of(parsed.model, trace);
  const fields = {
    model: parsed.model.id,
    prompt: parsed.prompt,
    n: parsed.n,
    size: parsed.size,
    response_format: parsed.responseFormat,
  };
  if (!parsed.image) return routes.postJson("/images/generations", fields, accept, signal);
  // OpenAI's edits endpoint takes a multipart form with the image as a file.
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, String(value));
  const extension = parsed.image.mediaType.split("/")[1];
  form.append(
    "image",
    new Blob([new Uint8Array(parsed.image.bytes)], { type: parsed.image.mediaType }),
    `image.${extension}`,
  );
  return routes.postJson("/images/edits", form, accept, signal);
}

function isHttpUrl(value: unknown): value is string {
  if (typeof value !== "string") return false;
  try {
    const url = new URL(value);
    return url.protocol === "https:" || url.protocol === "http:";
  } catch {
    return false;
  }
}

/**
 * The upstream answer as sent to the caller: each image as an http(s) `url` or as `b64_json`, nothing else.
 * Fewer usable images than were paid for is a failed upstream call, so nothing is settled.
 */
export function usableImages(answer: Record<string, unknown>, expected: number) {
  const items = Array.isArray(answer.data) ? (answer.data as Record<string, unknown>[]) : [];
  const data = items.flatMap((item): Record<string, string>[] => {
    const revised: Record<string, string> =
      typeof item.revised_prompt === "string" ? { revised_prompt: item.revised_prompt } : {};
    if (isHttpUrl(item.url)) return [{ url: item.url, ...revised }];
    if (typeof item.b64_json === "string" && item.b64_json.length > 0) return [{ b64_json: item.b64_json, ...revised }];
    return [];
  });
  if (data.length !== expected) {
    throw new UpstreamError("protocol", `image upstream returned ${data.length} usable images of ${expected}`);
  }
  return { created: typeof answer.created === "number" ? answer.created : Math.floor(Date.now() / 1000), data };
}

import { resourceUrl, type AppContext } from "../app-context";
import { readJsonBody } from "../http/read-json-body";
import { runPaidRequest } from "../payment/paid-request";
import { quoteImages } from "../pricing/quote-images";
import { UpstreamError } from "../upstream/upstream-error";
import { parseImageRequest, type ParsedImageRequest } from "./image-request";
import { type ApiAnswer } from "../http/api-answer";
import type { ApiRequest } from "../http/api-request";

/** A 10 MB image is about 13.4 MB of base64; 15 MiB leaves room for the rest of the body and nothing more. */
const MAX_IMAGE_BODY_BYTES = 15 * 1024 * 1024;

/** Endpoints 5 (`edit` false, generation) and 6 (`edit` true, image to image), paid per request. */
export async function createImage(context: AppContext, request: ApiRequest, edit: boolean): Promise<ApiAnswer> {
  const started = performance.now();
  const body = await readJsonBody(request, MAX_IMAGE_BODY_BYTES);
  const parsed = parseImageRequest(body.value, edit);
  const quote = quoteImages(parsed.model, parsed.n, context.config.network);
  return runPaidRequest(context, {
    request,
    resourceUrl: resourceUrl(context, request),
    description: `${edit ? "Image edit" : "Image generation"} with ${parsed.model.id}, ${parsed.n} x ${parsed.size}`,
    amount: quote.amount,
    quote: quote.display,
    bodySha256: body.sha256,
    quoteMs: performance.now() - started,
    work: async () => ({ kind: "json", body: usableImages(await callUpstream(context, parsed), parsed.n) }),
  });
}

function callUpstream(context: AppContext, parsed: ParsedImageRequest): Promise<Record<string, unknown>> {
  const fields = {
    model: parsed.model.id,
    prompt: parsed.prompt,
    n: parsed.n,
    size: parsed.size,
    response_format: parsed.responseFormat,
  };
  if (!parsed.image) return context.imageUpstream.postJson("/images/generations", fields);
  // OpenAI's edits endpoint takes a multipart form with the image as a file.
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, String(value));
  const extension = parsed.image.mediaType.split("/")[1];
  form.append(
    "image",
    new Blob([new Uint8Array(parsed.image.bytes)], { type: parsed.image.mediaType }),
    `image.${extension}`,
  );
  return context.imageUpstream.postJson("/images/edits", form);
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

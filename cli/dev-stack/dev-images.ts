import { createHash, randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { failedAnswer, type DevFaults } from "./dev-faults";
import { readBody, readJson, sendJson } from "../lib/json-http-server";
import { encodePng } from "./png";

/** Images handed out by URL, newest last; a development provider keeps only a few. */
const files = new Map<string, Buffer>();
const MAX_FILES = 64;

interface ImageAsk {
  model: string;
  prompt: string;
  n: number;
  size: string;
  responseFormat: string;
  /** Digest of the input image, for edits: a different input gives a different picture. */
  inputDigest?: string;
}

/** A picture derived from the request: same request, same picture. Bands of colour on a gradient. */
function picture(ask: ImageAsk, index: number): Buffer {
  const [width, height] = ask.size.split("x").map(Number) as [number, number];
  const seed = createHash("sha256")
    .update(`${ask.model}\0${ask.prompt}\0${index}\0${ask.inputDigest ?? ""}`)
    .digest();
  const bands = 2 + (seed[0]! % 6);
  return encodePng(width, height, (x, y) => {
    const band = Math.floor((y * bands) / height);
    const shade = Math.floor((x * 255) / width);
    return [(seed[1 + band]! + shade) & 0xff, seed[9 + band]!, (seed[17 + band]! + (255 - shade)) & 0xff];
  });
}

async function answer(
  request: IncomingMessage,
  response: ServerResponse,
  ask: ImageAsk,
  faults: DevFaults,
): Promise<void> {
  const fault = faults.in(ask.prompt);
  const failed = failedAnswer(fault);
  if (failed === "hang") return; // never answers; the caller's timeout must fire
  if (failed) return sendJson(response, failed.status, failed.body, failed.headers);
  if (!/^\d+x\d+$/.test(ask.size) || !Number.isInteger(ask.n) || ask.n < 1 || ask.n > 10) {
    return sendJson(response, 400, { error: { message: "invalid size or n", type: "invalid_request_error" } });
  }
  const data = Array.from({ length: ask.n }, (_, index) => {
    const png = picture(ask, index);
    if (fault === "bad-url") return { url: `ftp://${request.headers.host}/image-${index}.png` };
    if (ask.responseFormat !== "url") return { b64_json: png.toString("base64") };
    const id = randomUUID();
    files.set(id, png);
    if (files.size > MAX_FILES) files.delete(files.keys().next().value as string);
    return { url: `http://${request.headers.host}/v1/images/files/${id}.png` };
  });
  sendJson(response, 200, { created: Math.floor(Date.now() / 1000), data });
}

/** POST /v1/images/generations (JSON), as OpenAI's images API. */
export async function devImageGeneration(
  request: IncomingMessage,
  response: ServerResponse,
  faults: DevFaults,
): Promise<void> {
  const body = (await readJson(request)) as Record<string, unknown>;
  return answer(
    request,
    response,
    {
      model: String(body.model),
      prompt: String(body.prompt ?? ""),
      n: typeof body.n === "number" ? body.n : 1,
      size: String(body.size ?? "1024x1024"),
      responseFormat: String(body.response_format ?? "b64_json"),
    },
    faults,
  );
}

/** POST /v1/images/edits (multipart/form-data with an `image` file), as OpenAI's images API. */
export async function devImageEdit(
  request: IncomingMessage,
  response: ServerResponse,
  faults: DevFaults,
): Promise<void> {
  const raw = await readBody(request);
  const form = await new Request("http://dev.local/", {
    method: "POST",
    headers: { "content-type": request.headers["content-type"] ?? "" },
    body: new Uint8Array(raw),
  }).formData();
  const image = form.get("image");
  if (!(image instanceof Blob) || image.size === 0) {
    return sendJson(response, 400, { error: { message: "image file is required", type: "invalid_request_error" } });
  }
  return answer(
    request,
    response,
    {
      model: String(form.get("model")),
      prompt: String(form.get("prompt") ?? ""),
      n: Number(form.get("n") ?? 1),
      size: String(form.get("size") ?? "1024x1024"),
      responseFormat: String(form.get("response_format") ?? "b64_json"),
      inputDigest: createHash("sha256")
        .update(Buffer.from(await image.arrayBuffer()))
        .digest("hex"),
    },
    faults,
  );
}

/** GET /v1/images/files/<id>.png: an image handed out by URL. */
export function devImageFile(path: string, response: ServerResponse): void {
  const id = path.slice("/v1/images/files/".length).replace(/\.png$/, "");
  const png = files.get(id);
  if (!png) return sendJson(response, 404, { error: { message: "no such image", type: "invalid_request_error" } });
  response.writeHead(200, { "content-type": "image/png", "content-length": png.length });
  response.end(png);
}

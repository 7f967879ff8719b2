import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodePng } from "../cli/dev-stack/png";
import { startExtraApp } from "./support/extra-app";
import { startMessagesNativeApp } from "./support/messages-native-app";
import { buyPrepaidCode, postJson, quote, stack, type PrepaidCode } from "./support/payments";

/**
 * Images in every dialect, priced as the model's provider counts them (the default catalog's chat models: OpenAI's
 * tiles, 765 tokens for a 1024x1024 image): the same count whichever API they come in, in the 402, in count_tokens
 * and in what a key is charged; images by URL only of public hosts, never fetched.
 */
const MODEL = "vendor-a/gpt-6-luna";
const IMAGES = 20;
const TILE_TOKENS_1024 = 765;
const payer = () => stack().payers[6]!;

const pictures = Array.from({ length: IMAGES }, (_, index) =>
  encodePng(1024, 1024, (x, y) => [(x + index) % 256, y % 256, (index * 12) % 256]).toString("base64"),
);
const dataUrls = pictures.map((data) => `data:image/png;base64,${data}`);
const QUESTION = "What is in these pictures?";

const chatBody = (images: string[]) => ({
  model: MODEL,
  max_tokens: 32,
  messages: [
    {
      role: "user",
      content: [{ type: "text", text: QUESTION }, ...images.map((url) => ({ type: "image_url", image_url: { url } }))],
    },
  ],
});
const responsesBody = (images: string[]) => ({
  model: MODEL,
  max_output_tokens: 32,
  input: [
    {
      role: "user",
      content: [
        { type: "input_text", text: QUESTION },
        ...images.map((url) => ({ type: "input_image", image_url: url, detail: "auto" })),
      ],
    },
  ],
});
const messagesBody = (images: string[]) => ({
  model: MODEL,
  max_tokens: 32,
  messages: [
    {
      role: "user" as const,
      content: [
        { type: "text" as const, text: QUESTION },
        ...images.map((url) => ({
          type: "image" as const,
          source: { type: "base64" as const, media_type: "image/png" as const, data: url.split(",")[1]! },
        })),
      ],
    },
  ],
});

const quotedInput = async (path: string, body: unknown, base?: string) =>
  ((await quote(path, body, base)).extensions?.quote as { input_tokens: number }).input_tokens;

async function used(code: string, base = stack().appUrl) {
  const response = await fetch(`${base}/v1/prepaid/status`, { headers: { authorization: `Bearer ${code}` } });
  return ((await response.json()) as { tokens: { used: number } }).tokens.used;
}

let key: PrepaidCode;
beforeAll(async () => {
  key = await buyPrepaidCode(payer().privateKey, { model: MODEL, tokens: 1_000_000 });
});

describe("twenty 1024x1024 PNGs in each dialect", () => {
  it("are quoted at the formula's tokens over the text alone, the same in chat, Responses and Messages", async () => {
    const images = IMAGES * TILE_TOKENS_1024;
    for (const [path, body] of [
      ["/v1/chat/completions", chatBody],
      ["/v1/responses", responsesBody],
      ["/v1/messages", messagesBody],
    ] as const) {
      const text = await quotedInput(path, body([]));
      expect(await quotedInput(path, body(dataUrls)), path).toBe(text + images);
    }
    const anthropic = new Anthropic({ apiKey: "unused", baseURL: stack().appUrl, maxRetries: 0 });
    const counted = async (images: string[]) =>
      (await anthropic.messages.countTokens(messagesBody(images) as never)).input_tokens;
    expect(await counted(dataUrls)).toBe((await counted([])) + images);
    expect(await counted(dataUrls)).toBe(await quotedInput("/v1/messages", messagesBody(dataUrls)));
  });

  it("are served and charged to a key: the openai SDK (chat, Responses) and the Anthropic SDK (Messages)", async () => {
    const openai = new OpenAI({ apiKey: key.code, baseURL: `${stack().appUrl}/v1`, maxRetries: 0 });
    const anthropic = new Anthropic({ apiKey: key.code, baseURL: stack().appUrl, maxRetries: 0 });

    let before = await used(key.code);
    const completion = await openai.chat.completions.create(chatBody(dataUrls) as never);
    const chatInput = await quotedInput("/v1/chat/completions", chatBody(dataUrls));
    expect(completion.choices[0]!.message.content).toContain(QUESTION);
    expect((await used(key.code)) - before).toBe(chatInput + completion.usage!.completion_tokens);

    before = await used(key.code);
    const response = await openai.responses.create(responsesBody(dataUrls) as never);
    const responsesInput = await quotedInput("/v1/responses", responsesBody(dataUrls));
    expect(response.output_text).toContain(QUESTION);
    expect((await used(key.code)) - before).toBe(responsesInput + response.usage!.output_tokens);

    before = await used(key.code);
    const message = await anthropic.messages.create(messagesBody(dataUrls));
    const messagesInput = await quotedInput("/v1/messages", messagesBody(dataUrls));
    expect(message.content[0]).toMatchObject({ type: "text" });
    expect((await used(key.code)) - before).toBe(messagesInput + message.usage.output_tokens);
  });
});

describe("images by URL", () => {
  it("are refused with a 400 before any payment unless https to a public host", async () => {
    for (const url of [
      "https://127.0.0.1/cat.png",
      "https://10.0.0.1/cat.png",
      "https://169.254.169.254/latest/meta-data/",
      "https://[::1]/cat.png",
      "https://localhost/cat.png",
      "http://images.example.com/cat.png",
    ]) {
      for (const [path, body] of [
        ["/v1/chat/completions", chatBody([url])],
        ["/v1/responses", responsesBody([url])],
      ] as const) {
        const answer = await postJson(path, body);
        expect(answer.status, `${path} ${url}`).toBe(400);
        const error = ((await answer.json()) as { error: { message: string; param: string } }).error;
        expect(error.param, url).toMatch(/image_url/);
      }
      const answer = await postJson("/v1/messages", {
        ...messagesBody([]),
        messages: [{ role: "user", content: [{ type: "image", source: { type: "url", url } }] }],
      });
      expect(answer.status, `/v1/messages ${url}`).toBe(400);
      expect(await answer.text()).toContain("messages[0].content[0].source");
    }
  });

  it("on a public name (never contacted) are quoted at the formula's most", async () => {
    const url = "https://images.example.invalid/cat.png";
    const text = await quotedInput("/v1/chat/completions", chatBody([]));
    expect(await quotedInput("/v1/chat/completions", chatBody([url]))).toBe(text + 85 + 170 * 8);
  });
});

describe("parts the price does not cover", () => {
  it("are refused with a 400 naming them: audio and file parts, documents, images by file id", async () => {
    const refused = [
      [
        "/v1/chat/completions",
        {
          model: MODEL,
          messages: [
            { role: "user", content: [{ type: "input_audio", input_audio: { data: "AAAA", format: "wav" } }] },
          ],
        },
      ],
      [
        "/v1/chat/completions",
        { model: MODEL, messages: [{ role: "user", content: [{ type: "file", file: { file_id: "file-1" } }] }] },
      ],
      [
        "/v1/responses",
        { model: MODEL, input: [{ role: "user", content: [{ type: "input_file", file_id: "file-1" }] }] },
      ],
      [
        "/v1/responses",
        { model: MODEL, input: [{ role: "user", content: [{ type: "input_image", file_id: "file-1" }] }] },
      ],
      [
        "/v1/responses",
        {
          model: MODEL,
          input: [{ type: "function_call_output", call_id: "c1", output: [{ type: "input_file", file_id: "file-1" }] }],
        },
      ],
      [
        "/v1/messages",
        {
          model: MODEL,
          max_tokens: 16,
          messages: [
            {
              role: "user",
              content: [{ type: "document", source: { type: "text", data: "x", media_type: "text/plain" } }],
            },
          ],
        },
      ],
    ] as const;
    for (const [path, body] of refused) {
      const answer = await postJson(path, body);
      expect(answer.status, `${path} ${JSON.stringify(body)}`).toBe(400);
    }
  });
});

describe("a route that speaks Messages natively", () => {
  let app: Awaited<ReturnType<typeof startMessagesNativeApp>>;
  beforeAll(async () => {
    app = await startMessagesNativeApp();
  });
  afterAll(async () => {
    await app?.stop();
  });

  it("is sent exactly the images that were priced, counted by its own formula (Anthropic's pixels)", async () => {
    const nativeKey = await buyPrepaidCode(
      payer().privateKey,
      { model: MODEL, tokens: 100_000 },
      "/prepaid/codes",
      app.url,
    );
    const two = dataUrls.slice(0, 2);
    const text = await quotedInput("/v1/messages", messagesBody([]), app.url);
    const withImages = await quotedInput("/v1/messages", messagesBody(two), app.url);
    expect(withImages - text).toBe(2 * Math.ceil((1024 * 1024) / 750));
    const anthropic = new Anthropic({ apiKey: nativeKey.code, baseURL: app.url, maxRetries: 0 });
    await anthropic.messages.create(messagesBody(two));
    const sent = app.messagesReceived().at(-1)!.messages!.body as ReturnType<typeof messagesBody>;
    const images = sent.messages.flatMap((message) => message.content.filter((block) => block.type === "image"));
    expect(images.map((block) => (block as { source: { data: string } }).source.data)).toEqual(pictures.slice(0, 2));
  });

  it("refuses images to a model that reads none, naming the model", async () => {
    const answer = await postJson(
      "/v1/messages",
      { ...messagesBody(dataUrls.slice(0, 1)), model: "vendor-a/gpt-6-sol" },
      {},
      app.url,
    );
    expect(answer.status).toBe(400);
    expect(await answer.text()).toContain("vendor-a/gpt-6-sol does not read images");
  });
});

describe("the provider's own count as a check", () => {
  const METRICS_TOKEN = "vision-metrics-token-0123456789abcdef";
  let app: Awaited<ReturnType<typeof startExtraApp>>;
  beforeAll(async () => {
    app = await startExtraApp({ METRICS_TOKEN });
  });
  afterAll(async () => {
    await app?.stop();
  });

  const metric = async (name: string) => {
    const text = await (
      await fetch(`${app.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
    ).text();
    const line = text
      .split("\n")
      .find(
        (entry) =>
          entry.startsWith(`${name}{`) && entry.includes(`model="${MODEL}"`) && entry.includes('direction="over"'),
      );
    return line === undefined ? 0 : Number(line.split(" ").at(-1));
  };

  it("charges a key the provider's input where it reports more than counted, never more than reserved; the metric counts it", async () => {
    const code = (
      await buyPrepaidCode(payer().privateKey, { model: MODEL, tokens: 100_000 }, "/prepaid/codes", app.url)
    ).code;
    const openai = new OpenAI({ apiKey: code, baseURL: `${app.url}/v1`, maxRetries: 0 });
    const ask = (maxTokens: number) => ({
      model: MODEL,
      max_tokens: maxTokens,
      messages: [{ role: "user" as const, content: "[paysvc-dev-fault:more-input] count me" }],
    });
    const counted = await quotedInput("/v1/chat/completions", ask(2000), app.url);
    const [timesBefore, tokensBefore] = [
      await metric("paysvc_input_count_differences_total"),
      await metric("paysvc_input_count_difference_tokens_total"),
    ];

    let before = await used(code, app.url);
    const whole = await openai.chat.completions.create(ask(2000));
    expect(whole.usage!.prompt_tokens).toBe(counted + 1000);
    expect((await used(code, app.url)) - before).toBe(counted + 1000 + whole.usage!.completion_tokens);

    before = await used(code, app.url);
    let output = 0;
    for await (const chunk of await openai.chat.completions.create({
      ...ask(2000),
      stream: true,
      stream_options: { include_usage: true },
    })) {
      if (chunk.usage) output = chunk.usage.completion_tokens;
    }
    expect((await used(code, app.url)) - before).toBe(counted + 1000 + output);

    // Reserved: the input as counted and 100 output tokens; the provider's 1000 more are charged up to that.
    before = await used(code, app.url);
    await openai.chat.completions.create(ask(100));
    expect((await used(code, app.url)) - before).toBe(counted + 100);

    expect((await metric("paysvc_input_count_differences_total")) - timesBefore).toBe(3);
    expect((await metric("paysvc_input_count_difference_tokens_total")) - tokensBefore).toBe(3000);
  });
});

import { describe, expect, it } from "vitest";
import { decodePng, dataUri, fixtures } from "./support/images";
import { balances, ledgerRow, officialPayment, payingOpenAI, postJson, quote, stack } from "./support/payments";

const GENERATE = "/api/v1/images/generations";
const EDIT = "/api/v1/images/image2image";
const payer = () => stack().payers[4]!;

const MODELS: [string, string, bigint][] = [
  ["gpt-image-2", "1024x1024", 20_000n],
  ["gpt-image-2.5", "1024x1024", 40_000n],
  ["gpt-image-2.5-flare", "1024x1024", 40_000n],
  ["gpt-image-2.5-sunburst", "1024x1024", 40_000n],
  ["vendor-c-imagine-image", "1024x1024", 45_000n],
  ["gpt-image-2-2k", "2048x2048", 90_000n],
  ["gpt-image-2.5-sunburst-2k", "2048x2048", 220_000n],
];

/** Pays with the official x402 client and sends the request with fetch. */
async function paidPost(path: string, body: unknown) {
  const signature = await officialPayment(payer().privateKey, await quote(path, body));
  return { response: await postJson(path, body, { "PAYMENT-SIGNATURE": signature }), signature };
}

describe("image prices", () => {
  it("is the listed price per image x n plus 0.001 USD, for every model and n = 1 and n = 4", async () => {
    for (const [model, size, perImage] of MODELS) {
      for (const n of [1, 4]) {
        const required = await quote(GENERATE, { model, size, n, prompt: "a lighthouse" });
        expect(required.accepts[0]!.amount, `${model} n=${n}`).toBe((perImage * BigInt(n) + 1000n).toString());
        expect(required.extensions?.quote).toMatchObject({ model, size, n, settlement_overhead_usd: "0.001" });
      }
    }
  });
});

describe("paid image generation", () => {
  it("returns n real PNGs of the requested size through the official SDK, for exactly the quote", async () => {
    const body = { model: "gpt-image-2-2k", size: "2048x2048", n: 2, prompt: "a harbor at dusk" } as const;
    const price = BigInt((await quote(GENERATE, body)).accepts[0]!.amount);
    const before = await balances(payer().address);
    const openai = payingOpenAI(payer().privateKey, `${stack().appUrl}/api/v1`);
    const result = await openai.images.generate(body as never);
    expect(result.data).toHaveLength(2);
    for (const image of result.data ?? []) {
      expect(decodePng(Buffer.from(image.b64_json!, "base64"))).toEqual({ width: 2048, height: 2048 });
    }
    const after = await balances(payer().address);
    expect(before.payer - after.payer).toBe(price);
    expect(after.payTo - before.payTo).toBe(price);
  });

  it("answers with an http(s) URL when asked for url", async () => {
    const { response } = await paidPost(GENERATE, {
      model: "gpt-image-2",
      size: "1024x1024",
      prompt: "a fox",
      response_format: "url",
    });
    expect(response.status).toBe(200);
    const json = await response.json();
    expect(json.data[0].url).toMatch(/^http:\/\//);
    const image = await fetch(json.data[0].url);
    expect(image.headers.get("content-type")).toBe("image/png");
    expect(decodePng(Buffer.from(await image.arrayBuffer()))).toEqual({ width: 1024, height: 1024 });
  });
});

describe("paid image editing", () => {
  for (const [type, bytes] of [
    ["image/png", fixtures.png()],
    ["image/jpeg", fixtures.jpeg()],
    ["image/webp", fixtures.webp()],
  ] as const) {
    it(`edits a ${type} image`, async () => {
      const body = { model: "gpt-image-2.5", size: "1024x1024", prompt: "make it blue", image: dataUri(type, bytes) };
      const price = BigInt((await quote(EDIT, body)).accepts[0]!.amount);
      expect(price).toBe(41_000n);
      const before = await balances(payer().address);
      const { response } = await paidPost(EDIT, body);
      expect(response.status).toBe(200);
      const json = await response.json();
      expect(decodePng(Buffer.from(json.data[0].b64_json, "base64"))).toEqual({ width: 1024, height: 1024 });
      const after = await balances(payer().address);
      expect(before.payer - after.payer).toBe(price);
    });
  }
});

describe("invalid image requests get a 400 naming the field, and no 402", () => {
  async function expectBadRequest(path: string, body: unknown, param: string) {
    const response = await postJson(path, body);
    const json = await response.json();
    expect(response.status, JSON.stringify(json).slice(0, 300)).toBe(400);
    expect(response.headers.get("payment-required")).toBeNull();
    expect(json.error.param).toBe(param);
    return json.error.message as string;
  }
  const edit = (image: string, extra: Record<string, unknown> = {}) => ({
    model: "gpt-image-2",
    size: "1024x1024",
    prompt: "x",
    image,
    ...extra,
  });

  it("refuses a GIF, a wrong magic number and an image over 10 MB", async () => {
    expect(await expectBadRequest(EDIT, edit(dataUri("image/gif", fixtures.gif())), "image")).toMatch(/not supported/);
    expect(await expectBadRequest(EDIT, edit(dataUri("image/png", fixtures.jpeg())), "image")).toMatch(
      /declared image\/png/,
    );
    expect(
      await expectBadRequest(EDIT, edit(dataUri("image/png", Buffer.from("not an image at all"))), "image"),
    ).toMatch(/not a PNG, JPEG or WebP/);
    const big = Buffer.alloc(11 * 1024 * 1024);
    fixtures.png().copy(big);
    expect(await expectBadRequest(EDIT, edit(dataUri("image/png", big)), "image")).toMatch(/limit/);
    await expectBadRequest(EDIT, edit("https://example.com/cat.png"), "image");
  });

  it("refuses a 4001-character prompt, n = 5, a size not listed, an unknown model", async () => {
    await expectBadRequest(GENERATE, { model: "gpt-image-2", size: "1024x1024", prompt: "p".repeat(4001) }, "prompt");
    await expectBadRequest(GENERATE, { model: "gpt-image-2", size: "1024x1024", prompt: "p", n: 5 }, "n");
    await expectBadRequest(GENERATE, { model: "gpt-image-2", size: "1024x1024", prompt: "p", n: 0 }, "n");
    await expectBadRequest(GENERATE, { model: "gpt-image-2", size: "2048x2048", prompt: "p" }, "size");
    await expectBadRequest(GENERATE, { model: "dall-e-3", size: "1024x1024", prompt: "p" }, "model");
    await expectBadRequest(GENERATE, { model: "gpt-image-2", size: "1024x1024", prompt: "" }, "prompt");
  });

  it("refuses an image on the generation endpoint and its absence on the edit endpoint", async () => {
    await expectBadRequest(GENERATE, edit(dataUri("image/png", fixtures.png())), "image");
    await expectBadRequest(EDIT, { model: "gpt-image-2", size: "1024x1024", prompt: "x" }, "image");
  });

  it("refuses a body over the image cap with 413 without reading it whole", async () => {
    const response = await postJson(EDIT, edit(`data:image/png;base64,${"A".repeat(16 * 1024 * 1024)}`));
    expect(response.status).toBe(413);
  });
});

describe("image upstream failures charge nothing", () => {
  for (const fault of ["http-error", "bad-url"]) {
    it(`${fault}: 502, nothing settled`, async () => {
      const before = await balances(payer().address);
      const { response, signature } = await paidPost(GENERATE, {
        model: "gpt-image-2",
        size: "1024x1024",
        prompt: `[paysvc-dev-fault:${fault}]`,
        response_format: "url",
      });
      expect(response.status).toBe(502);
      expect(await balances(payer().address)).toEqual(before);
      expect(ledgerRow(signature)).toMatchObject({ status: "not_charged" });
    });
  }
});

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigurationError } from "../configuration-error";
import { defaultCatalog } from "./default-catalog";
import { loadCatalog, type CatalogSource } from "./load-catalog";
import { findChatModel } from "./model-catalog";

const directory = mkdtempSync(join(tmpdir(), "paysvc-catalog-"));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

let count = 0;
/** The catalog as an operator's file, written where PAYSVC_CATALOG would name it. */
function file(content: unknown): string {
  const path = join(directory, `catalog-${++count}.json`);
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
}

const upstream = { provider: "upstream", baseUrl: "http://127.0.0.1:4010/v1", headers: {} };
const source = (overrides: Partial<CatalogSource>): CatalogSource => ({
  file: undefined,
  defaultRoutes: { chat: upstream },
  environment: { OPENAI_API_KEY: "sk-test" },
  serving: true,
  ...overrides,
});

function problems(overrides: Partial<CatalogSource>): string[] {
  try {
    loadCatalog(source(overrides));
  } catch (error) {
    if (error instanceof ConfigurationError) return error.problems;
    throw error;
  }
  return [];
}

const route = {
  provider: "openai",
  base_url: "https://api.openai.com/v1/",
  api_key_env: "OPENAI_API_KEY",
  model: "gpt-x",
};
const chat = (id: string, extra: object = {}) => ({
  id,
  kind: "chat",
  prices: { input_per_1m: "0.10", output_per_1m: "0.40" },
  routes: [route],
  ...extra,
});

describe("the default catalog", () => {
  it("is the spec's tables, each model under its own id at UPSTREAM_BASE_URL", () => {
    const catalog = loadCatalog(source({}));
    expect(catalog.chat.map((model) => [model.id, model.inputUsdPerMillion, model.outputUsdPerMillion])).toEqual([
      ["vendor-a/gpt-5.6-sol", "2.80", "14.00"],
      ["vendor-a/gpt-5.6-terra", "1.40", "8.40"],
      ["vendor-a/gpt-6-luna", "0.07", "0.35"],
      ["vendor-a/gpt-6-sol", "1.40", "7.00"],
    ]);
    expect(catalog.images.map((model) => [model.id, model.sizes, model.usdPerImage])).toEqual([
      ["gpt-image-2", ["1024x1024"], "0.02"],
      ["gpt-image-2.5", ["1024x1024"], "0.04"],
      ["gpt-image-2.5-flare", ["1024x1024"], "0.04"],
      ["gpt-image-2.5-sunburst", ["1024x1024"], "0.04"],
      ["vendor-c-imagine-image", ["1024x1024"], "0.045"],
      ["gpt-image-2-2k", ["2048x2048"], "0.09"],
      ["gpt-image-2.5-sunburst-2k", ["2048x2048"], "0.22"],
    ]);
    expect(catalog.decision).toMatchObject({ id: "jev-latest", inputUsdPerMillion: "0.12", outputUsdPerMillion: "0" });
    expect([catalog.embeddings.id, catalog.freeChat.id]).toEqual([
      "vendor-b/nemotron-3-embed-1b",
      "vendor-b/gpt-oss-20b",
    ]);
    expect(findChatModel(catalog, "vendor-a/gpt-6-luna")?.routes).toEqual([
      { ...upstream, model: "vendor-a/gpt-6-luna" },
    ]);
  });

  it("is refused for serving without a provider, in one line naming UPSTREAM_BASE_URL", () => {
    expect(problems({ defaultRoutes: {} })).toEqual([
      expect.stringMatching(
        /^UPSTREAM_BASE_URL: required: no provider serves vendor-a\/gpt-5\.6-sol, .*vendor-b\/gpt-oss-20b; set/,
      ),
    ]);
    // Read for its prices only (paysvc quote), it needs none.
    expect(loadCatalog(source({ defaultRoutes: {}, serving: false })).chat).toHaveLength(4);
  });
});

describe("an operator's catalog file", () => {
  it("extends the spec's tables: an entry of a default id replaces it, a new id is added, keys are read", () => {
    const path = file({
      extends: "default",
      models: [
        chat("vendor-a/gpt-6-luna", {
          routes: [
            route,
            {
              ...route,
              provider: "backup",
              base_url: "http://b/v1",
              api_key_env: undefined,
              headers: { "x-org": "o" },
            },
          ],
        }),
        chat("acme/tiny-1", {
          prices: { input_per_1m: "0.123456", output_per_1m: "1.5" },
          limits: { context_tokens: 32000, max_output_tokens: 1000 },
        }),
        { id: "embed-2", kind: "embeddings", routes: [route] },
      ],
    });
    const catalog = loadCatalog(source({ file: path }));
    expect(catalog.chat.map((model) => model.id)).toEqual([
      "vendor-a/gpt-5.6-sol",
      "vendor-a/gpt-5.6-terra",
      "vendor-a/gpt-6-luna",
      "vendor-a/gpt-6-sol",
      "acme/tiny-1",
    ]);
    const luna = findChatModel(catalog, "vendor-a/gpt-6-luna")!;
    expect(luna.inputUsdPerMillion).toBe("0.10");
    expect(luna.routes).toEqual([
      {
        provider: "openai",
        baseUrl: "https://api.openai.com/v1",
        apiKeyVariable: "OPENAI_API_KEY",
        apiKey: "sk-test",
        model: "gpt-x",
        headers: {},
      },
      {
        provider: "backup",
        baseUrl: "http://b/v1",
        apiKeyVariable: undefined,
        apiKey: undefined,
        model: "gpt-x",
        headers: { "x-org": "o" },
      },
    ]);
    expect(findChatModel(catalog, "acme/tiny-1")).toMatchObject({ contextTokens: 32000, maxOutputTokens: 1000 });
    expect(catalog.embeddings.id).toBe("embed-2");
    // The other defaults keep their route at UPSTREAM_BASE_URL.
    expect(catalog.decision.routes).toEqual([{ ...upstream, model: "jev-latest" }]);
  });

  it("replaces them without extends, and then must name every kind an endpoint serves", () => {
    const whole = file({
      models: [
        chat("acme/tiny-1"),
        {
          id: "img",
          kind: "image",
          prices: { per_image: "0.01" },
          limits: { sizes: ["512x512", "1024x1024"] },
          routes: [route],
        },
        { id: "decide", kind: "decision", prices: { input_per_1m: "0.2" }, routes: [route] },
        { id: "embed", kind: "embeddings", routes: [route] },
        { id: "free", kind: "free_chat", routes: [route] },
      ],
    });
    const catalog = loadCatalog(source({ file: whole, defaultRoutes: {} }));
    expect(catalog.chat.map((model) => model.id)).toEqual(["acme/tiny-1"]);
    expect(catalog.images[0]?.sizes).toEqual(["512x512", "1024x1024"]);
    const partial = file({ models: [chat("acme/tiny-1")] });
    expect(problems({ file: partial })).toEqual([
      `${partial}: models: no entry of kind decision; add one, or add "extends": "default" to keep the spec's`,
      `${partial}: models: no entry of kind embeddings; add one, or add "extends": "default" to keep the spec's`,
      `${partial}: models: no entry of kind free_chat; add one, or add "extends": "default" to keep the spec's`,
    ]);
  });

  it("is refused with the file, the path in it and the fix for each problem", () => {
    const cases: [unknown, RegExp][] = [
      [
        { extends: "default", models: [chat("a", { prices: { input_per_1m: 0.07, output_per_1m: "1" } })] },
        /: models\[0\]\.prices\.input_per_1m: must be a decimal USD amount written as a string, such as "0\.07"$/,
      ],
      [
        { extends: "default", models: [chat("a", { prices: { input_per_1m: "0.0000001", output_per_1m: "1" } })] },
        /: models\[0\]\.prices\.input_per_1m: must be a decimal USD amount such as "0\.07", with at most 6 decimals$/,
      ],
      [
        { extends: "default", models: [chat("a", { prices: { input_per_1m: "-1", output_per_1m: "1" } })] },
        /models\[0\]\.prices\.input_per_1m: must be a decimal USD amount/,
      ],
      [
        { extends: "default", models: [{ ...chat("a"), kind: "video" }] },
        /: models\[0\]\.kind: must be one of chat, image, decision, embeddings, free_chat$/,
      ],
      [
        { extends: "default", models: [chat("a"), chat("b"), chat("a")] },
        /: models\[2\]\.id: "a" is already listed at models\[0\]; list each model once$/,
      ],
      [
        { extends: "default", models: [chat("a", { routes: [{ ...route, api_key_env: "UNSET_KEY" }] })] },
        /: models\[0\]\.routes\[0\]\.api_key_env: UNSET_KEY is not set; set it in the environment/,
      ],
      [
        { extends: "default", models: [chat("a", { routes: [] })] },
        /: models\[0\]\.routes: must list at least one route/,
      ],
      [
        { extends: "default", models: [chat("a", { routes: [{ ...route, base_url: "not a url" }] })] },
        /: models\[0\]\.routes\[0\]\.base_url: must be an absolute http\(s\) URL such as https:\/\/api\.openai\.com\/v1$/,
      ],
      [{ extends: "default", models: [chat("a", { colour: "red" })] }, /: models\[0\]: Unrecognized key: "colour"/],
      [
        {
          extends: "default",
          models: [chat("a"), chat("b", { routes: [{ ...route, base_url: "https://elsewhere/v1" }] })],
        },
        /: models\[1\]\.routes\[0\]\.base_url: provider "openai" is at https:\/\/api\.openai\.com\/v1 in models\[0\]\.routes\[0\]; give each base URL a provider name of its own$/,
      ],
      [{ extends: "everything", models: [] }, /: extends: must be "default"/],
      ["{ not json", /: not valid JSON \(.*\); fix the file$/],
    ];
    for (const [content, expected] of cases) {
      const path = file(content);
      const found = problems({ file: path });
      expect(found, JSON.stringify(content)).toHaveLength(1);
      expect(found[0]!.startsWith(`${path}: `), found[0]).toBe(true);
      expect(found[0]).toMatch(expected);
    }
    expect(problems({ file: join(directory, "missing.json") })).toEqual([
      `PAYSVC_CATALOG: cannot read ${join(directory, "missing.json")} (ENOENT); set it to the catalog's JSON file`,
    ]);
  });

  it("refuses a provider name the spec's tables already give another base URL, when it extends them", () => {
    const path = file({ extends: "default", models: [chat("a", { routes: [{ ...route, provider: "upstream" }] })] });
    expect(problems({ file: path })).toEqual([
      `${path}: models[0].routes[0].base_url: provider "upstream" is at http://127.0.0.1:4010/v1 in the spec's tables; give each base URL a provider name of its own`,
    ]);
    // The same name at the same URL is the same provider; without extends the spec's providers are not in force.
    const same = file({
      extends: "default",
      models: [chat("a", { routes: [{ ...route, provider: "upstream", base_url: upstream.baseUrl }] })],
    });
    expect(problems({ file: same })).toEqual([]);
  });

  it("is read for its prices without its keys (paysvc quote), but served only with them", () => {
    const path = file({
      extends: "default",
      models: [chat("a", { routes: [{ ...route, api_key_env: "UNSET_KEY" }] })],
    });
    expect(loadCatalog(source({ file: path, serving: false })).chat.at(-1)?.id).toBe("a");
  });

  it("keeps the default catalog's prices exactly as the spec's when extended by nothing", () => {
    expect(loadCatalog(source({ file: file({ extends: "default", models: [] }) }))).toEqual(
      defaultCatalog({ chat: upstream }),
    );
  });
});

describe("what a catalog file may not say", () => {
  const refused = (content: unknown) => {
    const path = file(content);
    return problems({ file: path }).map((problem) => {
      expect(problem.startsWith(`${path}: `), problem).toBe(true);
      return problem.slice(path.length + 2);
    });
  };

  it("refuses an id a model of another kind has in the catalog in force, naming both kinds", () => {
    expect(refused({ extends: "default", models: [chat("jev-latest")] })).toEqual([
      `models[0].id: "jev-latest" is the id of the chat model (models[0]) and of the decision model (the spec's tables); routes go by id, so one would be served by the other's providers: give each an id of its own`,
    ]);
    expect(
      refused({ extends: "default", models: [{ id: "vendor-a/gpt-6-luna", kind: "embeddings", routes: [route] }] }),
    ).toEqual([
      `models[0].id: "vendor-a/gpt-6-luna" is the id of the chat model (the spec's tables) and of the embeddings model (models[0]); routes go by id, so one would be served by the other's providers: give each an id of its own`,
    ]);
    // A default decision model replaced by the file frees its id.
    const replaced = file({
      extends: "default",
      models: [chat("jev-latest"), { id: "jev-2", kind: "decision", prices: { input_per_1m: "0.2" }, routes: [route] }],
    });
    expect(problems({ file: replaced })).toEqual([]);
  });

  it("refuses limits above what a request can ask for", () => {
    expect(
      refused({
        extends: "default",
        models: [chat("a", { limits: { context_tokens: 2_000_000, max_output_tokens: 1000 } })],
      }),
    ).toEqual([
      "models[0].limits.context_tokens: must be at most 1178000: a request holds at most 1050000 input and 128000 output tokens, so a larger window could never be used",
    ]);
    expect(
      refused({
        extends: "default",
        models: [chat("a", { limits: { context_tokens: 32_000, max_output_tokens: 128_001 } })],
      }),
    ).toEqual([
      "models[0].limits.max_output_tokens: must be at most 128000: the most max_tokens a request may ask for",
    ]);
    const most = file({
      extends: "default",
      models: [chat("a", { limits: { context_tokens: 1_178_000, max_output_tokens: 128_000 } })],
    });
    expect(problems({ file: most })).toEqual([]);
  });

  it("refuses a zero price for a sold model, saying why", () => {
    const zero = (prices: object, kind = "chat", extra: object = {}) =>
      refused({ extends: "default", models: [{ ...chat("a"), kind, prices, ...extra }] });
    const why =
      "must be above zero: a sold model is paid for (a prepaid key's tokens are priced at a chat model's input rate, so a zero rate gives keys away); serve a free model as the free_chat entry";
    expect(zero({ input_per_1m: "0", output_per_1m: "0.4" })).toEqual([`models[0].prices.input_per_1m: ${why}`]);
    expect(zero({ input_per_1m: "0.1", output_per_1m: "0.000000" })).toEqual([
      `models[0].prices.output_per_1m: ${why}`,
    ]);
    expect(zero({ per_image: "00.0" }, "image", { limits: { sizes: ["1024x1024"] } })).toEqual([
      `models[0].prices.per_image: ${why}`,
    ]);
    expect(zero({ input_per_1m: "0.00" }, "decision")).toEqual([`models[0].prices.input_per_1m: ${why}`]);
    expect(
      problems({
        file: file({
          extends: "default",
          models: [chat("a", { prices: { input_per_1m: "0.000001", output_per_1m: "0.000001" } })],
        }),
      }),
    ).toEqual([]);
  });

  it("refuses route headers that are no header, or that the upstream client sets itself", () => {
    const withHeaders = (headers: Record<string, string>) =>
      refused({ extends: "default", models: [chat("a", { routes: [{ ...route, headers }] })] });
    const at = "models[0].routes[0].headers";
    for (const name of ["Authorization", "content-type", "HOST", "Content-Length", "transfer-encoding"]) {
      expect(withHeaders({ [name]: "x" }), name).toEqual([
        `${at}.${name}: is set by the upstream client itself (authorization, content-type, content-length, host, transfer-encoding); the key goes in api_key_env`,
      ]);
    }
    for (const name of ["X Org", "x-org:", "", "x-örg"]) {
      expect(withHeaders({ [name]: "x" }), name).toEqual([
        `${at}.${name}: is not a header name (letters, digits and !#$%&'*+-.^_\`|~ only)`,
      ]);
    }
    for (const value of ["a\r\nX-Injected: 1", "a\nb", "a\u0000b"]) {
      expect(withHeaders({ "X-Org": value }), value).toEqual([
        `${at}.X-Org: has a value with a line break or NUL, which would end the header; remove it`,
      ]);
    }
    expect(withHeaders({ "X-Organization": "paysvc", "OpenAI-Beta": "assistants=v2", "x-api-version": "" })).toEqual(
      [],
    );
  });

  it("reads the API a route speaks (chat when left out), and refuses one it does not know", () => {
    const routes = [
      { ...route, provider: "native", api: "responses" },
      { ...route, provider: "chat-only", api: "chat" },
      { ...route, provider: "plain" },
    ];
    const catalog = loadCatalog(source({ file: file({ extends: "default", models: [chat("a", { routes })] }) }));
    expect(findChatModel(catalog, "a")?.routes.map((each) => each.api ?? "chat")).toEqual([
      "responses",
      "chat",
      "chat",
    ]);
    expect(refused({ extends: "default", models: [chat("a", { routes: [{ ...route, api: "grpc" }] })] })).toEqual([
      "models[0].routes[0].api: must be one of chat, responses, messages (the API the route speaks; chat if left out)",
    ]);
  });
});

describe("aliases of a chat model", () => {
  it("name the model they are listed under, besides its id", () => {
    const catalog = loadCatalog(
      source({
        file: file({ extends: "default", models: [chat("house/coder", { aliases: ["claude-sonnet-4-5", "gpt-5"] })] }),
      }),
    );
    expect(findChatModel(catalog, "claude-sonnet-4-5")?.id).toBe("house/coder");
    expect(findChatModel(catalog, "gpt-5")?.id).toBe("house/coder");
    expect(findChatModel(catalog, "house/coder")?.aliases).toEqual(["claude-sonnet-4-5", "gpt-5"]);
    expect(findChatModel(catalog, "claude-opus-4-1")).toBeUndefined();
    expect(findChatModel(catalog, "vendor-a/gpt-6-luna")?.aliases).toBeUndefined();
  });

  it("are refused when one names two models, is another model's id, is listed twice or is empty", () => {
    const path = file({
      extends: "default",
      models: [
        chat("house/a", { aliases: ["claude-sonnet-4-5", "vendor-a/gpt-6-luna", "x", "x"] }),
        chat("house/b", { aliases: ["claude-sonnet-4-5", "jev-latest", ""] }),
      ],
    });
    expect(problems({ file: path })).toEqual([`${path}: models[1].aliases[2]: must not be empty`]);
    const clashing = file({
      extends: "default",
      models: [
        chat("house/a", { aliases: ["claude-sonnet-4-5", "vendor-a/gpt-6-luna", "x", "x"] }),
        chat("house/b", { aliases: ["claude-sonnet-4-5", "jev-latest"] }),
      ],
    });
    expect(problems({ file: clashing })).toEqual([
      `${clashing}: aliases: "vendor-a/gpt-6-luna" of house/a is the id of a model of the catalog; an alias names another name`,
      `${clashing}: aliases: "x" is listed twice for house/a; list it once`,
      `${clashing}: aliases: "claude-sonnet-4-5" is an alias of house/a and of house/b; an alias names one model`,
      `${clashing}: aliases: "jev-latest" of house/b is the id of a model of the catalog; an alias names another name`,
    ]);
  });
});

describe("a chat model's own rate limits", () => {
  it("are read for keys and wallets, and refused when not whole numbers of a known limit", () => {
    const rateLimits = { key: { tokens_per_minute: 50_000 }, wallet: { requests_per_minute: 120, concurrent: 0 } };
    const catalog = loadCatalog(
      source({ file: file({ extends: "default", models: [chat("house/coder", { rate_limits: rateLimits })] }) }),
    );
    expect(findChatModel(catalog, "house/coder")?.rateLimits).toEqual(rateLimits);
    expect(findChatModel(catalog, "vendor-a/gpt-6-luna")?.rateLimits).toBeUndefined();
    const bad = { key: { requests_per_minute: -1 }, wallet: { per_day: 5 } };
    const path = file({ extends: "default", models: [chat("house/coder", { rate_limits: bad })] });
    expect(problems({ file: path })).toEqual([
      expect.stringContaining("models[0].rate_limits.key.requests_per_minute"),
      expect.stringContaining("models[0].rate_limits.wallet"),
    ]);
  });
});

describe("a chat model's vision", () => {
  it("is read with its formula's published constants where the file gives none, and absent means text only", () => {
    const models = [
      chat("house/eyes", { vision: { formula: "patches", multiplier: "1.62" } }),
      chat("house/claude", { vision: { formula: "pixels", max_image_bytes: 1_000_000 } }),
      chat("house/text"),
    ];
    const catalog = loadCatalog(source({ file: file({ extends: "default", models }) }));
    expect(findChatModel(catalog, "house/eyes")?.vision).toEqual({
      formula: "patches",
      patchSize: 32,
      maxPatches: 1536,
      multiplier: "1.62",
      maxImageBytes: 20 * 1024 * 1024,
    });
    expect(findChatModel(catalog, "house/claude")?.vision).toMatchObject({
      formula: "pixels",
      pixelsPerToken: 750,
      maxImageBytes: 1_000_000,
    });
    expect(findChatModel(catalog, "house/text")?.vision).toBeUndefined();
    expect(findChatModel(catalog, "vendor-a/gpt-6-luna")?.vision).toMatchObject({ formula: "tiles", baseTokens: 85 });
  });

  it("is refused with an unknown formula, a constant of another formula, or a bad value", () => {
    const bad = [
      chat("house/a", { vision: { formula: "guess" } }),
      chat("house/b", { vision: { formula: "tiles", multiplier: "2" } }),
      chat("house/c", { vision: { formula: "patches", multiplier: "0" } }),
      chat("house/d", { vision: { formula: "pixels", max_image_bytes: 100 * 1024 * 1024 } }),
    ];
    expect(problems({ file: file({ extends: "default", models: bad }) })).toEqual([
      expect.stringContaining("models[0].vision"),
      expect.stringContaining("models[1].vision"),
      expect.stringContaining("models[2].vision.multiplier"),
      expect.stringContaining("models[3].vision.max_image_bytes"),
    ]);
  });
});

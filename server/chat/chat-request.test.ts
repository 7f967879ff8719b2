import { describe, expect, it } from "vitest";
import { ApiError } from "../errors";
import { defaultCatalog } from "../../config/catalog/default-catalog";
import { parseChatRequest as parseWith, withOutputCap } from "./chat-request";

const parseChatRequest = (value: unknown) => parseWith(value, defaultCatalog());

const body = (extra: object) => ({
  model: "vendor-a/gpt-6-luna",
  messages: [{ role: "user", content: "x" }],
  ...extra,
});

describe("the upstream body's output cap", () => {
  const capped = (extra: object, cap: number) => withOutputCap(parseChatRequest(body(extra)).body, cap);

  it("puts the cap in each cap field the caller sent, else in max_tokens", () => {
    expect(capped({}, 4096)).toMatchObject({ max_tokens: 4096 });
    expect(capped({}, 4096)).not.toHaveProperty("max_completion_tokens");
    expect(capped({ max_tokens: 500 }, 300)).toMatchObject({ max_tokens: 300 });
    expect(capped({ max_completion_tokens: 500 }, 300)).toMatchObject({ max_completion_tokens: 300 });
    expect(capped({ max_completion_tokens: 500 }, 300)).not.toHaveProperty("max_tokens");
  });

  it("never passes on a larger cap beside the priced one", () => {
    const both = capped({ max_completion_tokens: 1, max_tokens: 128_000 }, 1);
    expect(both).toMatchObject({ max_completion_tokens: 1, max_tokens: 1 });
    expect(parseChatRequest(body({ max_completion_tokens: 1, max_tokens: 128_000 })).maxOutputTokens).toBe(1);
  });
});

describe("n", () => {
  it("accepts 1, null or nothing, and refuses more choices naming the field", () => {
    expect(parseChatRequest(body({ n: 1 })).body.n).toBe(1);
    expect(parseChatRequest(body({ n: null })).body.n).toBeNull();
    for (const n of [2, 0, 1.5, "1"]) {
      expect(() => parseChatRequest(body({ n }))).toThrow(ApiError);
      try {
        parseChatRequest(body({ n }));
      } catch (error) {
        expect((error as ApiError).options.param).toBe("n");
      }
    }
  });
});

import { describe, expect, it } from "vitest";
import { ApiError } from "../core/errors";
import type { ApiRequest } from "../http/api-request";
import { forwardedMessagesHeaders } from "./messages-headers";

const request = (headers: Record<string, string>) => ({ headers: new Headers(headers) }) as unknown as ApiRequest;

describe("the caller's headers a native Messages route is sent", () => {
  it("are the beta list and the version as sent, and nothing else", () => {
    const betas = "claude-code-20250219,interleaved-thinking-2025-05-14, fine-grained-tool-streaming-2025-05-14";
    expect(
      forwardedMessagesHeaders(
        request({ "anthropic-beta": betas, "anthropic-version": "2023-06-01", "x-api-key": "secret" }),
      ),
    ).toEqual({ "anthropic-beta": betas, "anthropic-version": "2023-06-01" });
    expect(forwardedMessagesHeaders(request({ "anthropic-beta": " " }))).toBeUndefined();
  });

  it("refuse a beta billed at rates the price does not cover, and a value that is not a list of names", () => {
    for (const [name, value, says] of [
      ["anthropic-beta", "claude-code-20250219,context-1m-2025-08-07", "context-1m-2025-08-07 is not sold here"],
      ["anthropic-beta", "a;b", "comma-separated list"],
      ["anthropic-version", "x".repeat(1025), "at most 1024"],
    ] as const) {
      let thrown: unknown;
      try {
        forwardedMessagesHeaders(request({ [name]: value }));
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(ApiError);
      expect((thrown as ApiError).status).toBe(400);
      expect((thrown as ApiError).message).toContain(says);
    }
  });
});

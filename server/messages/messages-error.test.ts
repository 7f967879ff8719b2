import { describe, expect, it } from "vitest";
import { ApiError } from "../core/errors";
import { x402ChallengePart } from "../billing/x402-challenge";
import { textAnswer } from "../http/api-answer";
import { messagesChallengeAnswer, messagesErrorAnswer, messagesErrorType, messagesStreamError } from "./messages-error";

describe("messagesErrorAnswer", () => {
  it("answers Anthropic's error body with Anthropic's type for each status, headers kept", () => {
    const answer = messagesErrorAnswer(
      new ApiError("payment_required", "Payment required", { headers: { "PAYMENT-REQUIRED": "e30=" } }),
    );
    expect(answer.status).toBe(402);
    expect(answer.headers["payment-required"]).toBe("e30=");
    expect(JSON.parse(answer.body as string)).toEqual({
      type: "error",
      error: { type: "billing_error", message: "Payment required" },
    });
    for (const [code, status, type] of [
      ["invalid_request", 400, "invalid_request_error"],
      ["invalid_api_key", 401, "authentication_error"],
      ["not_found", 404, "not_found_error"],
      ["model_not_found", 404, "not_found_error"],
      ["request_too_large", 413, "request_too_large"],
      ["insufficient_quota", 429, "rate_limit_error"],
      ["internal_error", 500, "api_error"],
      ["upstream_error", 502, "api_error"],
      ["service_unavailable", 503, "overloaded_error"],
    ] as const) {
      const answer = messagesErrorAnswer(new ApiError(code, "m"));
      expect({
        code,
        status: answer.status,
        type: (JSON.parse(answer.body as string) as { error: { type: string } }).error.type,
      }).toEqual({ code, status, type });
    }
  });

  it("tells nothing of an unexpected error", () => {
    const answer = messagesErrorAnswer(new Error("secret path /etc"));
    expect(answer.status).toBe(500);
    expect(answer.body).not.toContain("secret");
  });

  it("names 403, 529 and 504 as Anthropic does", () => {
    expect([403, 529, 504].map(messagesErrorType)).toEqual(["permission_error", "overloaded_error", "timeout_error"]);
  });
});

describe("messagesStreamError", () => {
  it("makes a canonical error event Anthropic's named error event", () => {
    const event = messagesStreamError({
      message: "Settlement failed",
      type: "payment_error",
      code: "settlement_failed",
    });
    expect(event.text()).toBe(
      'event: error\ndata: {"type":"error","error":{"type":"billing_error","message":"Settlement failed"}}\n\n',
    );
    expect(messagesStreamError({}).json()).toEqual({
      type: "error",
      error: { type: "api_error", message: "The stream failed" },
    });
  });
});

describe("messagesChallengeAnswer", () => {
  it("words billing's 402 in Anthropic's form, keeping its status, PAYMENT-REQUIRED and the x402 document", () => {
    const document = { x402Version: 2, accepts: [{ scheme: "exact", amount: "1200" }], extensions: { quote: {} } };
    const problem = { code: "payment_required" as const, message: "Payment required" };
    const part = x402ChallengePart(document as never, problem);
    const challenge = textAnswer(part.body!, "application/json", { status: 402, headers: part.headers });
    const answer = messagesChallengeAnswer(challenge);
    expect(answer.status).toBe(402);
    expect(answer.headers["payment-required"]).toBe(challenge.headers["payment-required"]);
    expect(answer.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(answer.body as string)).toEqual({
      ...document,
      type: "error",
      error: { type: "billing_error", message: "Payment required" },
    });
  });
});

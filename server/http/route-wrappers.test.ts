import { describe, expect, it } from "vitest";
import { ApiError } from "../core/errors";
import { jsonAnswer, type ApiAnswer, errorAnswer } from "./api-answer";
import type { ApiRequest } from "./api-request";
import { answerErrors } from "./answer-errors";
import {
  answersSeenBy,
  challengesAnsweredBy,
  checkedFirst,
  composeRoute,
  errorsAnsweredBy,
  type RouteWrapper,
} from "./route-wrappers";

const request: ApiRequest = {
  method: "POST",
  url: "http://127.0.0.1:3000/v1/thing",
  headers: { get: () => null },
  body: null,
};
const bodyOf = (answer: ApiAnswer) => JSON.parse(answer.body as string) as Record<string, unknown>;

describe("a route composed of wrappers", () => {
  it("runs them outermost first, each around the next, the handler last", async () => {
    const seen: string[] = [];
    const named =
      (name: string): RouteWrapper =>
      (next) =>
      async (asked) => {
        seen.push(`${name} in`);
        const answer = await next(asked);
        seen.push(`${name} out`);
        return answer;
      };
    const handle = composeRoute(
      async () => {
        seen.push("handler");
        return jsonAnswer({ ok: true });
      },
      named("outer"),
      undefined,
      named("inner"),
    );
    expect((await handle(request)).status).toBe(200);
    expect(seen).toEqual(["outer in", "inner in", "handler", "inner out", "outer out"]);
  });

  it("answers an API's errors in its shape, and leaves other failures to the wrappers outside", async () => {
    const shaped = errorsAnsweredBy((error) =>
      jsonAnswer({ type: "error", said: error.code }, { status: error.status }),
    );
    const refused = composeRoute(async () => {
      throw new ApiError("invalid_request", "no");
    }, shaped);
    const answer = await refused(request);
    expect(answer.status).toBe(400);
    expect(bodyOf(answer)).toEqual({ type: "error", said: "invalid_request" });
    const broken = composeRoute(async () => {
      throw new Error("boom");
    }, shaped);
    await expect(broken(request)).rejects.toThrow("boom");
    // The generic wrapper outside it answers what it leaves: a 500 that says nothing of the cause.
    const answered = await composeRoute(async () => {
      throw new Error("boom");
    }, answerErrors)(request);
    expect(answered.status).toBe(500);
    expect(answered.body).not.toContain("boom");
  });

  it("rewords 402s alone, runs a check before the handler, and shows each answer to a counter", async () => {
    const counted: number[] = [];
    let handled = 0;
    const handle = composeRoute(
      async (asked) => {
        handled++;
        return jsonAnswer({ paid: asked.headers.get("x") }, { status: asked.headers.get("x") ? 200 : 402 });
      },
      answersSeenBy((answer) => counted.push(answer.status)),
      challengesAnsweredBy((answer) => ({ ...answer, body: JSON.stringify({ reworded: true }) })),
      errorsAnsweredBy((error) => errorAnswer(error)),
      checkedFirst((asked) => {
        if (asked.url.endsWith("/limited")) throw new ApiError("rate_limit_exceeded", "slow down");
      }),
    );
    expect(bodyOf(await handle(request))).toEqual({ reworded: true });
    const paid = await handle({ ...request, headers: { get: (name) => (name === "x" ? "yes" : null) } });
    expect(bodyOf(paid)).toEqual({ paid: "yes" });
    const limited = await handle({ ...request, url: "http://127.0.0.1:3000/limited" });
    expect(limited.status).toBe(429);
    expect(handled).toBe(2);
    expect(counted).toEqual([402, 200, 429]);
  });
});

import { describe, expect, it } from "vitest";
import { isApiError } from "../core/errors";
import { textAnswer, type ApiAnswer } from "../http/api-answer";
import { ProviderShares } from "./provider-share";
import { whenAnswerEnds } from "../http/answer-end";

const refusal = (take: () => unknown) => {
  try {
    take();
  } catch (error) {
    return error;
  }
  return undefined;
};

describe("each caller's share of the provider", () => {
  it("refuses a caller's request past its share with a 429, others untouched, and frees a place once", () => {
    let refused = 0;
    const shares = new ProviderShares(2, () => refused++);
    const first = shares.take("10.0.0.1");
    shares.take("10.0.0.1");
    const error = refusal(() => shares.take("10.0.0.1"));
    expect(isApiError(error) && error.status).toBe(429);
    expect(isApiError(error) && error.code).toBe("rate_limit_exceeded");
    expect(isApiError(error) && error.options.headers).toMatchObject({ "Retry-After": "1" });
    expect(refused).toBe(1);
    // Another caller has its own share.
    shares.take("10.0.0.2");
    first();
    first();
    expect(shares.runningOf("10.0.0.1")).toBe(1);
    shares.take("10.0.0.1");
    expect(refusal(() => shares.take("10.0.0.1"))).toBeDefined();
  });

  it("counts nothing at 0", () => {
    const shares = new ProviderShares(0);
    for (let index = 0; index < 1000; index++) shares.take("10.0.0.1");
    expect(shares.runningOf("10.0.0.1")).toBe(0);
  });
});

describe("an answer's end", () => {
  const streamOf = (chunks: string[]): ApiAnswer => ({
    status: 200,
    headers: {},
    body: new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
        controller.close();
      },
    }),
  });

  it("is at once for a whole answer", () => {
    let ended = 0;
    whenAnswerEnds(textAnswer("{}", "application/json"), () => ended++);
    expect(ended).toBe(1);
  });

  it("is a stream's last byte read, every byte passed on, told once", async () => {
    let ended = 0;
    const answer = whenAnswerEnds(streamOf(["a", "b"]), () => ended++);
    const reader = (answer.body as ReadableStream<Uint8Array>).getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("a");
    expect(ended).toBe(0);
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("b");
    expect((await reader.read()).done).toBe(true);
    await reader.cancel();
    expect(ended).toBe(1);
  });

  it("is a stream's caller gone, before its end", async () => {
    let ended = 0;
    const answer = whenAnswerEnds(streamOf(["a", "b"]), () => ended++);
    const reader = (answer.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    await reader.cancel("caller left");
    expect(ended).toBe(1);
  });
});

describe("an answer's end awaited by two concerns", () => {
  it("wraps the stream once and tells both, in order, once", async () => {
    const told: string[] = [];
    const answer: ApiAnswer = {
      status: 200,
      headers: {},
      body: new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode("a"));
          controller.close();
        },
      }),
    };
    const first = whenAnswerEnds(answer, () => told.push("limits")).body;
    const second = whenAnswerEnds(answer, () => told.push("share")).body;
    expect(second).toBe(first);
    const reader = (second as ReadableStream<Uint8Array>).getReader();
    while (!(await reader.read()).done);
    await reader.cancel();
    expect(told).toEqual(["limits", "share"]);
  });
});

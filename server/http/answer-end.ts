import type { ApiAnswer } from "./api-answer";

/** The streams whenAnswerEnds made, with what each calls at its end: a second concern joins them, not a new layer. */
const endsOf = new WeakMap<ReadableStream<Uint8Array>, (() => void)[]>();

/**
 * Calls `end` once the answer's work is over: a whole answer at once (its write is not waited for); a stream once
 * its last byte is read, it fails, or its caller is gone. Returns the answer to send (a stream is wrapped once,
 * whatever the number of concerns waiting for its end: each chunk passes one layer).
 */
export function whenAnswerEnds(answer: ApiAnswer, end: () => void): ApiAnswer {
  const { body } = answer;
  if (typeof body === "string") {
    end();
    return answer;
  }
  const waiting = endsOf.get(body);
  if (waiting) {
    waiting.push(end);
    return answer;
  }
  const ends = [end];
  let ended = false;
  const once = () => {
    if (ended) return;
    ended = true;
    for (const each of ends) each();
  };
  const reader = body.getReader();
  answer.body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (!done) return controller.enqueue(value);
        controller.close();
      } catch (error) {
        controller.error(error);
      }
      once();
    },
    async cancel(reason) {
      try {
        await reader.cancel(reason);
      } finally {
        once();
      }
    },
  });
  endsOf.set(answer.body, ends);
  return answer;
}

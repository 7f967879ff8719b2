import type { ApiAnswer } from "./api-answer";

/**
 * Calls `end` once the answer's work is over: a whole answer at once (its write is not waited for); a stream once
 * its last byte is read, it fails, or its caller is gone. Returns the answer to send (a stream is wrapped).
 */
export function whenAnswerEnds(answer: ApiAnswer, end: () => void): ApiAnswer {
  const { body } = answer;
  if (typeof body === "string") {
    end();
    return answer;
  }
  let ended = false;
  const once = () => {
    if (ended) return;
    ended = true;
    end();
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
  return answer;
}

import type { ApiAnswer } from "../http/api-answer";
import type { Admission } from "./rate-limiter";

/**
 * An admitted call's answer: it carries its payer's rate-limit headers, and the call's use ends with it (a whole
 * answer once built; a stream once its last byte is read, or its caller gone), counting the tokens it was charged
 * where a key paid (`charged`), its reservation otherwise.
 */
export function limitedAnswer(answer: ApiAnswer, admission: Admission, charged?: () => number | undefined): ApiAnswer {
  Object.assign(answer.headers, admission.headers);
  const end = () => void admission.end(charged?.());
  const { body } = answer;
  // A whole answer is the call's end: nothing of it runs any more (its write is not waited for).
  if (typeof body === "string") {
    end();
    return answer;
  }
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
      end();
    },
    async cancel(reason) {
      try {
        await reader.cancel(reason);
      } finally {
        end();
      }
    },
  });
  return answer;
}

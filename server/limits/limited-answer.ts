import type { ApiAnswer } from "../http/api-answer";
import { whenAnswerEnds } from "../http/answer-end";
import type { Admission } from "./rate-limiter";

/**
 * An admitted call's answer: it carries its payer's rate-limit headers, and the call's use ends with it (a whole
 * answer once built; a stream once its last byte is read, or its caller gone), counting the tokens it was charged
 * where a key paid (`charged`), its reservation otherwise.
 */
export function limitedAnswer(answer: ApiAnswer, admission: Admission, charged?: () => number | undefined): ApiAnswer {
  Object.assign(answer.headers, admission.headers);
  return whenAnswerEnds(answer, () => void admission.end(charged?.()));
}

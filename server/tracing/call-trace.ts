import type { Span } from "./span";

/** What a paid call came to, as billing learns it: stated on the request's span and on the provider call's. */
interface CallNotes {
  /** The sold model and the output cap it was quoted for. */
  model?: string;
  maxTokens?: number;
  inputTokens?: number;
  outputTokens?: number;
  /** What the answer says it cost (USD, as the body states it). */
  cost?: string;
}

/**
 * One request's record beside its server span: what billing noted of the call, and the provider call that served
 * it, kept open until the request's answer is out (a stream's last byte), when its tokens and cost are known.
 */
export class CallTrace {
  private readonly notes: CallNotes = {};
  private served: { span: Span; endedAt: number | undefined } | undefined;

  constructor(
    readonly span: Span,
    /** The endpoint's path: what the GenAI operation is named from. */
    readonly route: string | undefined,
  ) {}

  note(notes: CallNotes): void {
    Object.assign(this.notes, notes);
  }

  /** The call's notes so far (the quoted model and cap, for the provider call's span). */
  get quoted(): Readonly<CallNotes> {
    return this.notes;
  }

  /** Keeps the provider call that served the request open until its usage is known (`endedAt`: when it answered). */
  adoptServed(span: Span, endedAt: number | undefined): void {
    this.served = { span, endedAt };
  }

  answered(status: number): void {
    this.span.setAttribute("http.response.status_code", status);
    if (status >= 500) this.span.failed = true;
  }

  end(): void {
    const { inputTokens, outputTokens, cost, model } = this.notes;
    const usage = {
      "gen_ai.usage.input_tokens": inputTokens,
      "gen_ai.usage.output_tokens": outputTokens,
      "paysvc.cost": cost,
    };
    if (this.served) {
      this.served.span.setAttributes(usage);
      this.served.span.end(this.served.endedAt);
    }
    this.span.setAttributes(usage);
    this.span.setAttribute("paysvc.model", model);
    this.span.end();
  }
}

import type { AppContext } from "./app-context";
import { resourceUrl } from "../http/public-urls";
import type { PaidEndpoint } from "./endpoint";
import { isApiError } from "../core/errors";
import type { ApiAnswer } from "../http/api-answer";
import type { ApiRequest } from "../http/api-request";
import { readJsonBody } from "../http/read-json-body";
import type { BillableCall, Finished, PreparedAnswer } from "../billing/payment-method";
import { chatUsageReader } from "../billing/chat-stream-meter";
import type { Admission } from "../limits/rate-limiter";
import { limitedAnswer } from "../limits/limited-answer";
import { countUngranted } from "./quote-limited";
import { phase, type Timings } from "../billing/phase";

/**
 * Every paid request, one path: parse -> quote -> authorize (by the payment method whose credential it carries, or
 * the 402 of every method: payment-methods.ts)
 * -> work -> finish (settle, or charge the usage) -> answer. Nothing is charged for work that failed. Each request
 * is counted once in the metrics, with what it came to.
 */
export async function billRequest(
  context: Pick<
    AppContext,
    | "config"
    | "payments"
    | "prepaidKeys"
    | "ownedKeys"
    | "metrics"
    | "providers"
    | "writes"
    | "limits"
    | "earlyAdmissions"
    | "quoteLimits"
    | "clientAddresses"
  >,
  endpoint: PaidEndpoint,
  request: ApiRequest,
  extensions: Record<string, unknown> | undefined,
): Promise<ApiAnswer> {
  const { metrics } = context;
  const [path] = endpoint.paths;
  // A request refused before its payment is looked at is invalid; after, refused.
  let refusedAs: "invalid" | "refused" = "invalid";
  try {
    const found = context.payments.credentialOf(endpoint, request);
    const code = found?.method.admissionKey?.(found.credential);
    const timings: Timings = {};
    const { trace } = request;
    const { body, parsed, quote } = await phase(
      timings,
      "quote",
      async () => {
        const read = await readJsonBody(request, endpoint.body?.maxBytes, { optional: endpoint.body?.optional });
        const value = endpoint.parse(read.value, request);
        const quoted = endpoint.quote(value, context.config.network);
        // Awaited only when it is a promise (a long input, counted yielding).
        return { body: read, parsed: value, quote: quoted instanceof Promise ? await quoted : quoted };
      },
      { parent: trace?.span },
    );
    const { tokens } = quote;
    trace?.note({ model: quote.model, inputTokens: tokens?.input, maxTokens: tokens?.maxOutput });
    let url: string | undefined;
    const call: BillableCall = {
      request,
      body,
      // Taken apart from the request when first read: x402 binds a payment to it, a prepaid call never reads it.
      get resourceUrl() {
        return (url ??= resourceUrl(context.config, request));
      },
      endpoint: path,
      overlapsVerify: endpoint.overlapsVerify === true,
      channels: endpoint.channels === true,
      streams: (body.value as { stream?: unknown } | null)?.stream === true,
      quote,
      quoteMs: timings.quote!,
      extensions,
      // Every call billed in tokens answers in the canonical chat wire, which billing reads.
      usage: endpoint.billedInTokens ? chatUsageReader : undefined,
    };
    refusedAs = "refused";
    const limited = { tokens: limitedTokens(quote), model: quote.tokens?.model };
    // A key seen before is admitted in the same turn as its reservation (early-admission.ts).
    const { earlyAdmissions } = context;
    const asked = earlyAdmissions.ask(code, limited);
    const authorization = await context.payments.authorize(call, found).catch(async (error: unknown) => {
      await earlyAdmissions.giveBack(asked);
      // An unknown or spent key is unpaid work for its caller, as a quote is.
      if (isApiError(error) && error.status === 401) countUngranted(context, path, request);
      throw error;
    });
    if (authorization.kind === "answer") {
      await earlyAdmissions.giveBack(asked);
      // A payment refused (junk, another's signature, the wrong terms): unpaid work for its caller, as a quote is.
      if (authorization.outcome === "refused") countUngranted(context, path, request);
      metrics.request(path, authorization.outcome);
      return authorization.answer;
    }
    const { session } = authorization;
    earlyAdmissions.learn(code, session.grant.payer);
    let prepared: PreparedAnswer | undefined;
    let finished: Finished | undefined;
    let admission: Admission | undefined;
    try {
      // Over a rate limit of its payer, the call is refused before any work: the session takes nothing.
      admission = await earlyAdmissions.admitted(asked, session.grant.payer, limited);
      // The session's phases' times hold the work's (its Server-Timing `upstream`); its spans are the provider's
      // attempts', so the phase has none of its own.
      const work = () => endpoint.work(context, parsed, session.grant, request);
      prepared = await phase(session.timings, "upstream", work);
    } catch (error) {
      // The session throws what to answer instead, or answers the payment's refusal given while the work ran.
      // A call not served counts against no limit.
      await admission?.giveBack();
      admission = undefined;
      finished = await session.failed(error);
    }
    finished ??= await session.finish(prepared!).catch(async (error: unknown) => {
      await admission?.end();
      throw error;
    });
    if (admission) limitedAnswer(finished.answer, admission, finished.chargedTokens);
    metrics.request(path, finished.outcome);
    metrics.timed(finished.payment, finished.timings);
    // An upto stream counts its revenue when it settles, on its usage.
    if (finished.outcome === "paid" && finished.settledAmount !== undefined) {
      metrics.settled(path, quote.model, finished.settledAmount);
    }
    return finished.answer;
  } catch (error) {
    // A limit reached is a refusal, whenever it is found.
    if (isApiError(error)) {
      metrics.failed(path, error.status, error.code, error.code === "rate_limit_exceeded" ? "refused" : refusedAs);
    } else metrics.request(path, "error");
    throw error;
  }
}

/** What a call counts against a tokens-per-minute limit until it ends: its input and output cap (none for others). */
function limitedTokens(quote: BillableCall["quote"]): number {
  return quote.tokens ? quote.tokens.input + quote.tokens.maxOutput : 0;
}

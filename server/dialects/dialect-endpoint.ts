import type { ModelCatalog } from "../../config/catalog/model-catalog";
import type { AnswerEncoder, Grant, PreparedAnswer } from "../billing/payment-method";
import { chatCompletionAnswer } from "../chat/chat-answer";
import { withOutputCap } from "../chat/chat-request";
import type { ChatCompletion, ChatRequestBody } from "../chat/chat-wire";
import { paidEndpoint, type PaidEndpoint, type WorkContext } from "../context/endpoint";
import { quoteCompletion } from "../pricing/quote-completion";
import type { RouteCall } from "../upstream/provider-routes";
import type { Dialect, DialectCall, NativeApi } from "./dialect";
import type { CallTrace } from "../tracing/call-trace";

/**
 * The paid endpoint of a dialect, the same for chat, Responses and Messages: paid with x402 (any scheme, channels
 * included) or billed to a prepaid key; priced on the canonical chat request; served by the model's routes, as a
 * chat completion (whole or streamed) or, on routes that speak the dialect's API natively, as that API decoded to
 * the canonical answer. Billing meters the canonical answer, and the dialect's encoders write it last.
 */
export function dialectEndpoint<Parsed extends DialectCall>(
  dialect: Dialect<Parsed>,
  options: { catalog: ModelCatalog },
): PaidEndpoint<Parsed> {
  const { catalog } = options;
  return paidEndpoint<Parsed>({
    method: "POST",
    paths: dialect.paths,
    access: ["x402", "prepaid"],
    callsProvider: true,
    channels: true,
    overlapsVerify: true,
    billedInTokens: true,
    schema: dialect.schema,
    parse: (value, request) => dialect.parse(value, catalog, request),
    quote: (parsed, network) =>
      quoteCompletion({
        model: parsed.model,
        request: parsed.chatRequest,
        beside: parsed.countedBeside,
        maxOutputTokens: parsed.maxOutputTokens,
        network,
        description: `${dialect.name} with ${parsed.model.id}`,
      }),
    work: (context, parsed, grant, request) => served(dialect, context, parsed, grant, request.trace),
    keyCarriers: dialect.keyCarriers,
    errorAnswer: (error) => dialect.errorAnswer(error),
    ...(dialect.challengeAnswer ? { challengeAnswer: dialect.challengeAnswer } : {}),
    docs: dialect.docs(catalog),
  });
}

/** The call served as the canonical answer, with the dialect's encoders for billing to apply last. */
async function served<Parsed extends DialectCall>(
  dialect: Dialect<Parsed>,
  context: WorkContext,
  parsed: Parsed,
  grant: Grant,
  trace: CallTrace | undefined,
): Promise<PreparedAnswer> {
  const encode: AnswerEncoder = {
    json: (body) => dialect.encodeAnswer(parsed, body as ChatCompletion),
    stream: (events) => dialect.encodeStream(parsed, events),
  };
  const { native } = dialect;
  // Each route is sent the call in the API it speaks: the caller's own where it speaks it, else chat.
  const answer = await context.providers
    .of(parsed.model, trace)
    .serve(
      (api, route) =>
        native && api === native.api
          ? servedNatively(native, route, parsed, grant)
          : servedAsChat(route, parsed, grant),
      grant.signal,
    );
  return { ...answer.value, provider: answer.provider, encode };
}

type Canonical = Extract<PreparedAnswer, { kind: "json" }> | Extract<PreparedAnswer, { kind: "stream" }>;

/** The canonical request sent to a route that speaks chat: the canonical answer as it comes. */
async function servedAsChat(route: RouteCall, parsed: DialectCall, grant: Grant): Promise<Canonical> {
  const request = canonicalRequest(parsed.chatRequest, grant.outputCap, parsed.stream);
  if (!parsed.stream) {
    return { kind: "json", body: await route.postJson("/chat/completions", request, chatCompletionAnswer) };
  }
  return { kind: "stream", stream: await route.startStream("/chat/completions", request) };
}

/**
 * The canonical request sent to a chat route: its output capped at what was paid or reserved; a stream always asks
 * for its usage, which billing reads (and the chat dialect shows only to a caller who asked for it).
 */
export function canonicalRequest(chatRequest: ChatRequestBody, outputCap: number, stream: boolean): ChatRequestBody {
  const request = withOutputCap(chatRequest, outputCap);
  if (stream) {
    request.stream = true;
    request.stream_options = { ...chatRequest.stream_options, include_usage: true };
  }
  return request;
}

/**
 * The call sent as it came to a route that speaks its API (with the caller's headers its API forwards), the answer
 * decoded to the canonical one.
 */
async function servedNatively<Parsed extends DialectCall>(
  native: NativeApi<Parsed>,
  route: RouteCall,
  parsed: Parsed,
  grant: Grant,
): Promise<Canonical> {
  const request = native.request(parsed, grant.outputCap);
  const headers = native.headers?.(parsed);
  if (!parsed.stream) {
    const decode = (body: Record<string, unknown>) => native.decodeAnswer(parsed, body);
    return { kind: "json", body: await route.postJson(native.path, request, decode, headers) };
  }
  const started = await route.startStream(native.path, request, headers);
  return { kind: "stream", stream: { ...started, body: native.decodeStream(parsed, started.body) } };
}

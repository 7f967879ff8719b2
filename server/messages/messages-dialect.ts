import type { ChatModel } from "../../config/catalog/model-catalog";
import type { ChatRequestBody } from "../chat/chat-wire";
import { carryNative, nativeOf, type Dialect } from "../dialects/dialect";
import { tokenPricing } from "../context/pricing-text";
import { mapEvents, type EventStream, type SseEvent } from "../http/event-stream";
import { isComment, messageFromChatCompletion } from "./message-object";
import { messagesChallengeAnswer, messagesErrorAnswer } from "./messages-error";
import { forwardedMessagesHeaders } from "./messages-headers";
import { parseMessagesRequest, messagesRequestSchema, type MessagesRequest } from "./messages-request";
import { MessagesStreamEncoder } from "./messages-stream";
import { decodeNativeMessage, type DecodedNativeMessage } from "./native-message";
import { nativeRequestBody } from "./native-request";
import { decodeNativeStream, encodeNativeEvent, nativeEventsOf } from "./native-stream";
import { thinkingTexts, toChatRequest } from "./to-chat-request";

/** A Messages request, parsed, with the canonical chat call it is translated to. */
export interface MessagesCall {
  body: MessagesRequest;
  model: ChatModel;
  chatRequest: ChatRequestBody;
  maxOutputTokens: number;
  stream: boolean;
  /** The caller's `anthropic-beta` and `anthropic-version`, checked: what a native route is sent (messages-headers.ts). */
  forwardedHeaders?: Record<string, string>;
}

/**
 * The Messages events of a metered canonical stream: a stream decoded from a route that speaks Messages carries its
 * native events (native-stream.ts), which go out as they came (the cost in message_delta's usage); any other is
 * translated (messages-stream.ts). Which it is shows on its first event that is not a comment.
 */
function encodeMessagesEvents(parsed: MessagesCall, canonical: EventStream): EventStream {
  const soldModel = parsed.model.id;
  const translator = new MessagesStreamEncoder({ model: soldModel });
  let native: boolean | undefined;
  const encode = (event: SseEvent): SseEvent[] => {
    if (native === undefined && !isComment(event)) native = nativeEventsOf(event) !== undefined;
    if (native === undefined) return [event];
    return native ? encodeNativeEvent(event, soldModel) : translator.push(event);
  };
  const nonEmpty = (events: SseEvent[]) => (events.length > 0 ? events : undefined);
  return mapEvents(
    canonical,
    (batch) => nonEmpty(batch.flatMap(encode)),
    () => (native ? undefined : nonEmpty(translator.end())),
  );
}

/**
 * Anthropic's Messages API (`POST /v1/messages`, as the official SDK and Claude Code call it; `?beta=true` and the
 * `anthropic-*` headers accepted), translated to the canonical chat call for chat routes and passed through to
 * routes that speak Messages natively, with the caller's `anthropic-beta` and `anthropic-version`; the key in
 * `x-api-key` or the bearer; errors in Anthropic's form.
 */
export const messagesDialect: Dialect<MessagesCall> = {
  name: "Message",
  paths: ["/v1/messages", "/api/v1/messages"],
  schema: messagesRequestSchema,
  parse(value, catalog, request) {
    const parsed = parseMessagesRequest(value, catalog);
    const forwardedHeaders = forwardedMessagesHeaders(request);
    return {
      ...parsed,
      chatRequest: toChatRequest(parsed),
      countedBeside: thinkingTexts(parsed.body),
      stream: parsed.body.stream === true,
      ...(forwardedHeaders ? { forwardedHeaders } : {}),
    };
  },
  encodeAnswer(parsed, completion) {
    const native = nativeOf(completion) as DecodedNativeMessage | undefined;
    if (native) return native.encode(completion, parsed.model.id);
    return messageFromChatCompletion(completion, parsed.model.id);
  },
  encodeStream: encodeMessagesEvents,
  errorAnswer: messagesErrorAnswer,
  challengeAnswer: messagesChallengeAnswer,
  keyCarriers: ["x-api-key", "bearer"],
  docs: (catalog) => ({
    operationId: "createMessage",
    summary: "Anthropic Messages API (paid per request; prepaid key accepted in x-api-key or as bearer)",
    example: { model: "vendor-a/gpt-6-luna", max_tokens: 256, messages: [{ role: "user", content: "Hello" }] },
    responseDescription:
      "message object, or a text/event-stream of Messages events (message_start ... message_stop); errors as {type: error, error: {type, message}}",
    pricing: tokenPricing(catalog, "max_tokens"),
    streaming: true,
  }),
  native: {
    api: "messages",
    path: "/messages",
    // The route's model id is put in by the route; the output capped at what the payment or the key covers.
    request: (parsed, outputCap) => ({ ...nativeRequestBody(parsed, parsed.model.id), max_tokens: outputCap }),
    // The caller's beta list and version; a translated call is never sent them.
    headers: (parsed) => parsed.forwardedHeaders,
    decodeAnswer(_parsed, body) {
      const decoded = decodeNativeMessage(body);
      return carryNative(decoded.canonical, decoded);
    },
    decodeStream: (_parsed, native) => decodeNativeStream(native),
  },
};

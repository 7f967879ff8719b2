import Anthropic from "@anthropic-ai/sdk";
import { wrapFetchWithPayment } from "@x402/fetch";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { balances, buyPrepaidCode, paymentClient, quote, stack, type PrepaidCode } from "./support/payments";
import {
  CHAT_ROUTE_MODEL_ID,
  NATIVE_MESSAGES_KEY,
  NATIVE_MODEL_ID,
  startMessagesNativeApp,
} from "./support/messages-native-app";

/**
 * A catalog route that speaks Anthropic's Messages API natively: a Messages call is passed through to it as it came
 * (fields a chat provider could not honour included), and metered the same as a translated one.
 */

const MODEL = "vendor-a/gpt-6-luna";
const payer = () => stack().payers[7]!;
let app: Awaited<ReturnType<typeof startMessagesNativeApp>>;
let key: PrepaidCode;

beforeAll(async () => {
  app = await startMessagesNativeApp();
  key = await buyPrepaidCode(payer().privateKey, { model: MODEL, tokens: 100_000 }, "/prepaid/codes", app.url);
});

afterAll(async () => {
  await app?.stop();
});

async function keyStatus(code: string) {
  const response = await fetch(`${app.url}/v1/prepaid/status`, { headers: { authorization: `Bearer ${code}` } });
  return (await response.json()) as { tokens: { used: number; reserved: number; remaining: number } };
}

const withKey = () => new Anthropic({ apiKey: key.code, baseURL: app.url, maxRetries: 0 });

/** A request with fields only a Messages provider honours, which a native route is sent as they came. */
const request = (content: string) => ({
  model: MODEL,
  max_tokens: 64,
  system: [{ type: "text" as const, text: "Be brief." }],
  messages: [{ role: "user" as const, content }],
  top_k: 5,
  thinking: { type: "disabled" as const },
  metadata: { user_id: "native-route-e2e" },
});

describe("a Messages call on a route that speaks Messages natively", () => {
  it("is passed through as it came, and the key charged exactly the usage the answer states", async () => {
    const { data: message, response } = await withKey()
      .messages.create({ ...request("native whole"), context_management: { edits: [] } } as never)
      .withResponse();

    expect(response.headers.get("x-paysvc-provider")).toBe("messages-native");
    expect(message.model).toBe(MODEL);
    expect((message.content[0] as { text: string }).text).toContain("native whole");
    const sent = app.messagesReceived().at(-1)!;
    expect(sent.messages!.path).toBe("/v1/messages");
    // Anthropic's API authenticates with x-api-key (and requires a version: see below); the caller's own key never
    // reaches it.
    expect(sent.headers["x-api-key"]).toBe(NATIVE_MESSAGES_KEY);
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.messages!.body).toMatchObject({
      model: NATIVE_MODEL_ID,
      max_tokens: 64,
      top_k: 5,
      thinking: { type: "disabled" },
      metadata: { user_id: "native-route-e2e" },
      context_management: { edits: [] },
      system: [{ type: "text", text: "Be brief." }],
    });
    const usage = message.usage as unknown as { prepaid_charged_tokens: number };
    expect(usage.prepaid_charged_tokens).toBe(message.usage.input_tokens + message.usage.output_tokens);
    expect((await keyStatus(key.code)).tokens).toMatchObject({ used: usage.prepaid_charged_tokens, reserved: 0 });
  });

  it("streams the provider's events through, message_delta stating the charge", async () => {
    const before = (await keyStatus(key.code)).tokens.used;
    const stream = withKey().messages.stream({ ...request("native stream"), stream: true } as never);
    const events: { type: string; usage?: unknown }[] = [];
    stream.on("streamEvent", (event) => events.push(event));
    const final = await stream.finalMessage();

    expect(final.model).toBe(MODEL);
    expect((final.content[0] as { text: string }).text).toContain("native stream");
    // The provider's events as it sent them (the SDK passes over its ping).
    const types = events.map((event) => event.type);
    expect(types.slice(0, 2)).toEqual(["message_start", "content_block_start"]);
    expect(types.slice(-3)).toEqual(["content_block_stop", "message_delta", "message_stop"]);
    expect(app.messagesReceived().at(-1)!.messages!.body).toMatchObject({ stream: true, top_k: 5 });
    const delta = events.find((event) => event.type === "message_delta")!.usage as {
      output_tokens: number;
      prepaid_charged_tokens: number;
    };
    const stated = final.usage.input_tokens + final.usage.output_tokens;
    expect(delta.prepaid_charged_tokens).toBe(stated);
    expect((await keyStatus(key.code)).tokens.used - before).toBe(stated);
  });

  it("is paid with x402 for exactly its quote", async () => {
    const body = request("native paid");
    const price = BigInt((await quote("/v1/messages", body, app.url)).accepts[0]!.amount);
    const before = await balances(payer().address);
    const client = new Anthropic({
      apiKey: "unused",
      baseURL: app.url,
      fetch: wrapFetchWithPayment(fetch, paymentClient(payer().privateKey)),
      maxRetries: 0,
    });
    const message = await client.messages.create(body);
    expect((message.content[0] as { text: string }).text).toContain("native paid");
    expect((message.usage as unknown as { cost: string }).cost).toMatch(/^\d+\.\d+$/);
    const after = await balances(payer().address);
    expect(before.payer - after.payer).toBe(price);
  });
});

/** Claude Code's beta list (as recorded in e2e/__fixtures__/agents/), and a version other than the default. */
const CALLER_HEADERS = {
  "anthropic-beta": "claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27",
  "anthropic-version": "2024-10-22",
};

const payingClient = () =>
  new Anthropic({
    apiKey: "unused",
    baseURL: app.url,
    fetch: wrapFetchWithPayment(fetch, paymentClient(payer().privateKey)),
    maxRetries: 0,
  });

describe("the caller's anthropic-beta and anthropic-version", () => {
  it("reach a native route as the caller sent them, whole and streamed", async () => {
    const message = await withKey().messages.create(request("native beta whole"), { headers: CALLER_HEADERS });
    expect((message.content[0] as { text: string }).text).toContain("native beta whole");
    const whole = app.messagesReceived().at(-1)!;
    expect(whole.headers).toMatchObject(CALLER_HEADERS);
    // Only those: the caller's key and its other headers stay here.
    expect(whole.headers["x-api-key"]).toBe(NATIVE_MESSAGES_KEY);
    expect(whole.headers["x-stainless-lang"]).toBeUndefined();

    // The SDK's own version is the caller's here.
    const versionsSent: (string | null)[] = [];
    const recording = new Anthropic({
      apiKey: key.code,
      baseURL: app.url,
      maxRetries: 0,
      fetch: (input, init) => {
        versionsSent.push(new Headers(init?.headers).get("anthropic-version"));
        return fetch(input, init);
      },
    });
    const stream = recording.messages.stream({ ...request("native beta stream"), stream: true } as never, {
      headers: { "anthropic-beta": CALLER_HEADERS["anthropic-beta"] },
    });
    await stream.finalMessage();
    const streamed = app.messagesReceived().at(-1)!;
    expect(streamed.messages!.body).toMatchObject({ stream: true });
    expect(versionsSent).toHaveLength(1);
    expect(versionsSent[0]).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(streamed.headers).toMatchObject({
      "anthropic-beta": CALLER_HEADERS["anthropic-beta"],
      "anthropic-version": versionsSent[0],
    });
  });

  it("leave the provider the version it requires when the caller names none, and no beta list", async () => {
    const response = await fetch(`${app.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": key.code },
      body: JSON.stringify(request("native no version")),
    });
    expect(response.status).toBe(200);
    const sent = app.messagesReceived().at(-1)!;
    expect(sent.headers["anthropic-version"]).toBe("2023-06-01");
    expect(sent.headers["anthropic-beta"]).toBeUndefined();
  });

  it("never reach a chat route, which the call is translated for", async () => {
    const before = app.chatReceived().length;
    const message = await payingClient().messages.create(
      { ...request("chat route beta"), model: "vendor-a/gpt-6-sol", max_tokens: 16 },
      { headers: CALLER_HEADERS },
    );
    expect(message.model).toBe("vendor-a/gpt-6-sol");
    const sent = app.chatReceived().slice(before);
    expect(sent.map((received) => received.model)).toEqual([CHAT_ROUTE_MODEL_ID]);
    expect(sent[0]!.headers["anthropic-beta"]).toBeUndefined();
    expect(sent[0]!.headers["anthropic-version"]).toBeUndefined();
  });

  it("are refused 400 in Anthropic's form when not a list of names, or too long, and nothing is charged", async () => {
    const used = (await keyStatus(key.code)).tokens;
    const sent = app.upstream.chatRequestsReceived.length;
    const balance = await balances(payer().address);
    const bad = [
      { "anthropic-beta": "claude-code-20250219;drop=1" },
      { "anthropic-beta": "x".repeat(1025) },
      { "anthropic-version": '2023-06-01 "quoted"' },
    ];
    for (const headers of bad) {
      for (const client of [withKey(), payingClient()]) {
        const refused = await client.messages.create(request("never sent"), { headers }).catch((error) => error);
        expect(refused).toBeInstanceOf(Anthropic.BadRequestError);
        expect((refused as InstanceType<typeof Anthropic.BadRequestError>).error).toEqual({
          type: "error",
          error: { type: "invalid_request_error", message: expect.stringContaining(Object.keys(headers)[0]!) },
        });
      }
    }
    expect(app.upstream.chatRequestsReceived.length).toBe(sent);
    expect((await keyStatus(key.code)).tokens).toEqual(used);
    expect(await balances(payer().address)).toEqual(balance);
  });
});

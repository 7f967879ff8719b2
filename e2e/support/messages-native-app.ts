import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startLocalUpstream, type LocalUpstream } from "../../cli/dev-stack/local-upstream";
import { startExtraApp } from "./extra-app";

/** The native route's API key: Anthropic's API takes it as `x-api-key`. */
export const NATIVE_MESSAGES_KEY = "sk-ant-native-e2e";

/** The provider's own id of the model on the native route: what the route is sent. */
export const NATIVE_MODEL_ID = "luna-messages-2026";

/** The provider's own id of vendor-a/gpt-6-sol, which this app serves by a chat route of the same provider. */
export const CHAT_ROUTE_MODEL_ID = "sol-chat-2026";

/**
 * An app whose catalog serves vendor-a/gpt-6-luna by a route that speaks Anthropic's Messages API natively (a
 * development provider of its own, which records what it is sent; images counted by Anthropic's formula), and
 * vendor-a/gpt-6-sol by a chat route of that provider (text only), over the shared stack's chain and database.
 */
export async function startMessagesNativeApp() {
  const directory = mkdtempSync(join(tmpdir(), "paysvc-messages-native-"));
  const upstream: LocalUpstream = await startLocalUpstream({ port: 0 });
  const catalog = join(directory, "catalog.json");
  writeFileSync(
    catalog,
    JSON.stringify({
      extends: "default",
      models: [
        {
          id: "vendor-a/gpt-6-luna",
          kind: "chat",
          prices: { input_per_1m: "0.07", output_per_1m: "0.35" },
          // Counted as Anthropic counts images; vendor-a/gpt-6-sol here reads none.
          vision: { formula: "pixels" },
          routes: [
            {
              provider: "messages-native",
              base_url: `${upstream.url}/v1`,
              model: NATIVE_MODEL_ID,
              api: "messages",
              api_key_env: "NATIVE_MESSAGES_KEY",
            },
          ],
        },
        {
          id: "vendor-a/gpt-6-sol",
          kind: "chat",
          prices: { input_per_1m: "1.40", output_per_1m: "7.00" },
          routes: [{ provider: "chat-local", base_url: `${upstream.url}/v1`, model: CHAT_ROUTE_MODEL_ID }],
        },
      ],
    }),
  );
  const app = await startExtraApp({ PAYSVC_CATALOG: catalog, NATIVE_MESSAGES_KEY });
  return {
    url: app.url,
    upstream,
    /** The Messages calls the native route was sent, in order. */
    messagesReceived: () => upstream.chatRequestsReceived.filter((received) => received.messages !== undefined),
    /** The chat completions the chat route was sent, in order. */
    chatReceived: () => upstream.chatRequestsReceived.filter((received) => received.messages === undefined),
    async stop() {
      await app.stop();
      await upstream.stop();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

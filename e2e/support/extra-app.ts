import { childEnvironment } from "../../config/env";
import { freePort, startNextApp } from "../../server/local-stack/next-app";
import { stack } from "./payments";

/**
 * A second app process over the shared stack's chain, facilitator, upstream and database, with some settings
 * replaced; `CLOSED_PORT` in a value becomes a port nothing listens on. `framework`: served by `next start` (the
 * route file) instead of app/serve.mjs.
 */
export async function startExtraApp(overrides: Record<string, string> = {}, options: { framework?: boolean } = {}) {
  const closedPort = await freePort();
  return startNextApp({
    framework: options.framework,
    onLogLine: process.env.PAYSVC_E2E_SHOW_APP_LOG === "1" ? (line) => console.log(line) : undefined,
    host: "127.0.0.1",
    port: await freePort(),
    env: childEnvironment({
      NETWORK: "eip155:137",
      PAY_TO: stack().payTo,
      FACILITATOR_URL: stack().facilitatorUrl,
      CHAIN_RPC_URL: stack().chainRpcUrl,
      UPSTREAM_BASE_URL: stack().upstreamBaseUrl,
      DATABASE_URL: `file:${stack().databasePath}`,
      UPSTREAM_TIMEOUT_MS: "3000",
      FACILITATOR_TIMEOUT_MS: "3000",
      RECONCILE_INTERVAL_SECONDS: "0",
      ...Object.fromEntries(
        Object.entries(overrides).map(([name, value]) => [name, value.replace("CLOSED_PORT", String(closedPort))]),
      ),
    }),
  });
}

import { childEnvironment } from "../../config/env";
import { freePort, startNextApp } from "../../cli/dev-stack/next-app";
import { stack } from "./payments";

/** What an extra app runs over: the shared stack unless a test started a stack of its own. */
export interface Deployment {
  network: string;
  payTo: string;
  facilitatorUrl: string;
  upstreamBaseUrl: string;
  chainRpcUrl: string;
  databasePath: string;
}

const sharedDeployment = (): Deployment => ({ network: "eip155:137", ...stack() });

/**
 * A second app process over a deployment's chain, facilitator, upstream and database (the shared stack's by
 * default), with some settings replaced (an empty value unsets one); `CLOSED_PORT` in a value becomes a port
 * nothing listens on. `onLogLine` sees every line the app logs.
 */
export async function startExtraApp(
  overrides: Record<string, string> = {},
  options: { over?: Deployment; onLogLine?: (line: string) => void } = {},
) {
  const closedPort = await freePort();
  const deployment = options.over ?? sharedDeployment();
  const show = process.env.PAYSVC_E2E_SHOW_APP_LOG === "1";
  return startNextApp({
    onLogLine: (line) => {
      options.onLogLine?.(line);
      if (show) console.log(line);
    },
    host: "127.0.0.1",
    port: await freePort(),
    env: childEnvironment({
      NETWORK: deployment.network,
      PAY_TO: deployment.payTo,
      FACILITATOR_URL: deployment.facilitatorUrl,
      CHAIN_RPC_URL: deployment.chainRpcUrl,
      UPSTREAM_BASE_URL: deployment.upstreamBaseUrl,
      DATABASE_URL: `file:${deployment.databasePath}`,
      UPSTREAM_TIMEOUT_MS: "3000",
      FACILITATOR_TIMEOUT_MS: "3000",
      RECONCILE_INTERVAL_SECONDS: "0",
      // A stopped app drains what is under way; a test's stalled caller should not hold it long.
      SHUTDOWN_GRACE_SECONDS: "5",
      ...Object.fromEntries(
        Object.entries(overrides).map(([name, value]) => [name, value.replace("CLOSED_PORT", String(closedPort))]),
      ),
    }),
  });
}

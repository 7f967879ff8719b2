import { childEnvironment } from "../../config/env";
import { credentialVariables } from "../../config/facilitators";
import { freePort, startNextAppOnFreePort } from "../../cli/dev-stack/next-app";
import { stack } from "./payments";

/** What an extra app runs over: the shared stack unless a test started a stack of its own. */
export interface Deployment {
  network: string;
  payTo: string;
  facilitatorUrl: string;
  /** The credentials its facilitator serves the deployment's apps with (`Name: value`). */
  facilitatorAuthHeader: string;
  upstreamBaseUrl: string;
  chainRpcUrl: string;
  databasePath: string;
}

const sharedDeployment = (): Deployment => ({ network: "eip155:137", ...stack() });

/**
 * A second app process over a deployment's chain, facilitator, upstream and database (the shared stack's by
 * default), with some settings replaced (an empty value unsets one); `CLOSED_PORT` in a value becomes a port
 * nothing listens on. `onLogLine` sees every line the app logs. It has the deployment's facilitator credentials, as
 * the stack's own app does, also for an entry of a FACILITATORS override that names that facilitator.
 */
export async function startExtraApp(
  overrides: Record<string, string> = {},
  options: { over?: Deployment; onLogLine?: (line: string) => void } = {},
) {
  const closedPort = await freePort();
  const deployment = options.over ?? sharedDeployment();
  const show = process.env.PAYSVC_E2E_SHOW_APP_LOG === "1";
  return startNextAppOnFreePort({
    onLogLine: (line) => {
      options.onLogLine?.(line);
      if (show) console.log(line);
    },
    host: "127.0.0.1",
    env: childEnvironment({
      NETWORK: deployment.network,
      PAY_TO: deployment.payTo,
      FACILITATOR_URL: deployment.facilitatorUrl,
      // Unless the test names other credentials (FACILITATOR_AUTH=cdp) for a front of its own.
      FACILITATOR_AUTH_HEADER: overrides.FACILITATOR_AUTH ? "" : deployment.facilitatorAuthHeader,
      ...entryCredentials(overrides.FACILITATORS, deployment),
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

/** FACILITATOR_<NAME>_AUTH_HEADER for each `name=url` entry of FACILITATORS that is the deployment's facilitator. */
function entryCredentials(list: string | undefined, deployment: Deployment): Record<string, string> {
  const entries = (list ?? "").split(",").map((item) => item.trim().split("="));
  return Object.fromEntries(
    entries
      .filter(([, url]) => url === deployment.facilitatorUrl)
      .map(([name]) => [credentialVariables(name!, false).header, deployment.facilitatorAuthHeader]),
  );
}

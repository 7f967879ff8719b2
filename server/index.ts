/**
 * The server as one module: app/serve.mjs and the console's pages load this file's compiled form (dist/server.mjs,
 * `npm run build:server`), one instance per process, so that they share one AppContext.
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { createAppServer } from "./http/app-server";
import net from "node:net";
import { STREAM_USAGE_GRACE_MS } from "../config/limits";
import { loadServiceConfig } from "../config/service-config";
import { createAppContext, type AppContext } from "./context/app-context";
import { deploymentFacts } from "./discovery/discovery-documents";
import { catalogOf } from "./endpoints/endpoint-catalog";
import { endpointsFor } from "./endpoints";
import { nodeHandler } from "./http/node-handler";
import { Router } from "./http/router";
import { appRoutes } from "./app-routes";
import { logEvent } from "./core/log";
import { operatorRoutes } from "./operator/operator-routes";
import { operatorSessions } from "./operator/operator-session";
import { operatorView, type OperatorView } from "./operator/operator-view";
import { operatorKeys, type KeysQuery, type OperatorKeys } from "./operator/operator-keys";
import { warmTokenCounter } from "./pricing/warm-token-counter";
import { startTracing, stopTracing } from "./tracing/tracing";

export { clientExampleCode, curlExampleCode } from "./discovery/agent-guides";
export { priceSheet } from "./console/price-sheet";
export { walletPurchaseTerms } from "./console/wallet-purchase";

let context: AppContext | undefined;
let router: Router | undefined;
let starting: Promise<AppContext> | undefined;

/**
 * Builds the process's one context from validated configuration: reaches and migrates the database. Called once
 * before the server listens (app/serve.mjs); a failure is the start's.
 */
export function startAppContext(): Promise<AppContext> {
  starting ??= (async () => {
    const config = loadServiceConfig();
    // Before any request: each is then served in its span (tracing/request-span.ts).
    startTracing(config.tracing);
    // Before anything is served: the first long input quoted then runs compiled code (warm-token-counter.ts).
    warmTokenCounter();
    // The endpoints sell the catalog in force: its models, prices and routes, read once at start.
    const endpoints = endpointsFor(config.catalog);
    const created = await createAppContext(config, catalogOf(endpoints));
    const routes = [
      ...appRoutes(endpoints, created.catalog, appContext),
      ...operatorRoutes(created.config, () => ({
        clientAddresses: appContext().clientAddresses,
        sessions: appContext().sessions,
        limitLog: appContext().storage.limitLog,
        ownedKeys: appContext().ownedKeys,
      })),
    ];
    router = new Router(routes, () => created.config.corsOrigins);
    context = created;
    return created;
  })();
  return starting;
}

/** The context `startAppContext` built. */
export function appContext(): AppContext {
  if (!context) throw new Error("the app context is used before startAppContext() finished");
  return context;
}

function startedRouter(): Router {
  if (!router) throw new Error("a request arrived before startAppContext() finished");
  return router;
}

/** The HTTP server app/serve.mjs listens with: the deployment's bounds on connections (http/app-server.ts). */
export function createHttpServer(handle: (request: IncomingMessage, response: ServerResponse) => void): Server {
  const { config, clientAddresses } = appContext();
  return createAppServer(config.connections, (address) => clientAddresses.trusts(address), handle);
}

/**
 * The handler app/serve.mjs runs for every request: false for the paths `framework` says are the framework's,
 * left to it; true for every other, answered.
 */
export function createNodeHandler(origin: string, framework: (path: string) => boolean) {
  const { drain, config } = appContext();
  return nodeHandler(startedRouter(), origin, framework, {
    drain,
    network: config.network.id,
    streamStallMs: config.streamStallMs,
  });
}

/**
 * The process's way out on SIGTERM or SIGINT (app/serve.mjs): stops listening, answers new requests on kept
 * connections 503, lets what is under way finish for SHUTDOWN_GRACE_SECONDS, then cuts the streams still running
 * (billed what they passed on) and waits for their charges and settlements (at most the facilitator's timeout
 * and the usage grace more), stops the background reconciliation and closes the database.
 */
export async function shutDown(server: Server): Promise<void> {
  const { drain, config, storage } = appContext();
  drain.begin();
  // No new connection is accepted. Kept ones stay open (http.Server's close would close the idle ones): a request
  // that arrives on one is answered 503 with Connection: close, which tells its client to go elsewhere.
  net.Server.prototype.close.call(server);
  logEvent("info", "draining", { grace_seconds: config.shutdownGraceMs / 1000, ...drain.underWay });
  const afterCutMs = config.facilitatorTimeoutMs + STREAM_USAGE_GRACE_MS + 5000;
  const { drained, cut } = await drain.finish(config.shutdownGraceMs, afterCutMs);
  logEvent(drained ? "info" : "error", "drained", { streams_cut: cut, left_under_way: drain.underWay });
  server.closeAllConnections();
  await Promise.all([storage.close(), stopTracing()]);
}

/** The deployment as a visitor reaches it at `host`, for the console's pages. */
export function deploymentFor(host: string) {
  const current = appContext();
  const request = new Request(`http://${host}/`, { headers: { host } });
  return { config: current.config, facts: deploymentFacts(current, request) };
}

/**
 * The operator's page for a visitor with this Cookie header: none without OPERATOR_TOKEN (the page is a 404), the
 * sign-in form without a valid session, else what it shows.
 */
export async function operatorPage(
  cookieHeader: string | null,
  keysQuery: KeysQuery = {},
): Promise<
  { state: "absent" } | { state: "signed-out" } | { state: "signed-in"; view: OperatorView; keys: OperatorKeys }
> {
  const current = appContext();
  const token = current.config.operatorToken;
  if (!token) return { state: "absent" };
  if (!(await operatorSessions(current.sessions, token).signedIn(cookieHeader))) return { state: "signed-out" };
  const [view, keys] = await Promise.all([operatorView(current), operatorKeys(current.ownedKeys, keysQuery)]);
  return { state: "signed-in", view, keys };
}

export type { OperatorView } from "./operator/operator-view";
export type { OperatorKeys, KeysQuery } from "./operator/operator-keys";

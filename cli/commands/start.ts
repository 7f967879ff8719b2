import { spawn } from "node:child_process";
import type { Command } from "commander";
import { catalogModels, catalogProviders } from "../../config/catalog/model-catalog";
import { redactedDatabaseUrl } from "../../config/database-url";
import { collectProblems } from "../../config/configuration-error";
import { childEnvironment } from "../../config/env";
import {
  BUILT_IN_FACILITATOR,
  credentialVariables,
  describeFacilitator,
  facilitatorsVariable,
} from "../../config/facilitators";
import { redactedUrl } from "../../config/host-urls";
import { loadStartConfig, type StartConfig } from "../../config/start-config";
import {
  checkFacilitators,
  takesPayments,
  type FacilitatorCapability,
} from "../../server/payment/facilitator-capabilities";
import { gatewayFor, offeredSchemes } from "../../server/payment/gateway-for";
import { APP_SERVER, buildExists } from "../lib/app-build";
import { startBuiltInFacilitator } from "../lib/facilitator-server";
import { print } from "../lib/output";

/** A refused start: one line per problem, each naming what to set, and exit code 2; nothing was started. */
function refuse(problems: string[]): never {
  for (const problem of problems) console.error(`paysvc start: ${problem}`);
  process.exit(2);
}

/** What `--check` reports of a valid configuration: no secret, only which kind of credentials each facilitator has. */
function summary(config: StartConfig, capabilities: FacilitatorCapability[]) {
  const { service } = config;
  return {
    network: service.network.id,
    payTo: service.payTo,
    facilitators: service.facilitators.map((entry, index) => ({
      ...describeFacilitator(entry),
      ...(entry.builtIn &&
        config.builtInFacilitator && { url: `built-in, on ${redactedUrl(config.builtInFacilitator.rpcUrl)}` }),
      check: capabilities[index]!,
    })),
    database: redactedDatabaseUrl(service.databaseUrl),
    catalog: config.catalogFile ?? "the spec's tables (PAYSVC_CATALOG unset)",
    listen: `${config.host}:${config.port}`,
    models: catalogModels(service.catalog).map(({ kind, model }) => ({
      id: model.id,
      kind,
      routes: model.routes.map((route) => `${route.provider}:${route.model}`),
    })),
    providers: catalogProviders(service.catalog).map(({ provider, route }) => ({
      provider,
      baseUrl: redactedUrl(route.baseUrl),
    })),
  };
}

export function registerStartCommand(program: Command): void {
  program
    .command("start")
    .description(
      "Run the service in production: the operator's pay-to, facilitator, providers (catalog) and database; nothing embedded, ever",
    )
    .option(
      "--check",
      "validate the whole configuration, catalog included, and the production build, and exit (0: it would start)",
    )
    .option("--json", "print --check's report as JSON")
    .addHelpText(
      "after",
      `
Required: PAY_TO; a facilitator: FACILITATOR_URL, or FACILITATORS (name=url entries in the order to try them,
and built-in), or CHAIN_RPC_URL + FACILITATOR_PRIVATE_KEY (the built-in facilitator); a provider for every model
sold (UPSTREAM_BASE_URL, or routes in the PAYSVC_CATALOG file); DATABASE_URL.
Facilitator credentials: FACILITATOR_<NAME>_AUTH=cdp (a JWT from CDP_API_KEY_ID + CDP_API_KEY_SECRET; the default
at CDP's URL) or FACILITATOR_<NAME>_AUTH_HEADER="x-secret-key: ..." (FACILITATOR_AUTH* with FACILITATOR_URL).
Each facilitator is asked /supported with its credentials; start is refused when none lists exact on the network
and one answered (credentials rejected, no exact); when none answers, it starts degraded (paid calls get 503 with
Retry-After until one does). --check exits 2 in both cases.
Refused as public: the development accounts as PAY_TO or FACILITATOR_PRIVATE_KEY. Refused as lost at a restart:
DATABASE_URL=:memory:. The production build must exist (npm run build).
Exit codes: 2 when something is missing or wrong (one line each on stderr, nothing started); with --check, 0 when
it would start.

Examples:
  $ PAY_TO=0x... FACILITATORS=cdp=https://api.cdp.coinbase.com/platform/v2/x402,built-in \\
    CDP_API_KEY_ID=... CDP_API_KEY_SECRET=... CHAIN_RPC_URL=https://... FACILITATOR_PRIVATE_KEY=0x... \\
    UPSTREAM_BASE_URL=https://api.example/v1 UPSTREAM_API_KEY=... DATABASE_URL=postgres://paysvc@db/paysvc paysvc start
  $ PAYSVC_CATALOG=/etc/paysvc/catalog.json paysvc start --check`,
    )
    .action(async (options: { check?: boolean; json?: boolean }) => {
      const problems: string[] = [];
      const config = collectProblems(problems, () => loadStartConfig());
      if (!buildExists()) problems.push("no production build: run `npm run build` first");
      if (problems.length > 0 || !config) refuse(problems);
      if (options.check) {
        // The built-in facilitator is asked as the others are: started for the check, on the operator's chain.
        const running = await withBuiltInFacilitator(config);
        const capabilities = await checkFacilitators(gatewayFor(running.service), offeredSchemes(config.service));
        await running.stop();
        const report = summary(config, capabilities);
        print(options.json === true, report, () =>
          [
            `configuration ok: ${report.network}, pay-to ${report.payTo}`,
            ...report.facilitators.map(
              (entry) => `facilitator ${entry.name} (${entry.url}; credentials: ${entry.auth}): ${entry.check.summary}`,
            ),
            `database    ${report.database}`,
            `catalog     ${report.catalog}`,
            `providers   ${report.providers.map((provider) => `${provider.provider} (${provider.baseUrl})`).join(", ")}`,
            `models      ${report.models.length}: ${report.models.map((model) => `${model.id} via ${model.routes.join(" > ")}`).join("; ")}`,
          ].join("\n"),
        );
        if (!takesPayments(capabilities)) {
          console.error(`paysvc start: ${noExactProblem(config)}`);
          process.exitCode = 2;
        }
        return;
      }
      await serve(config);
    });
}

function noExactProblem(config: StartConfig): string {
  const names = config.service.facilitators.map((entry) => entry.name).join(", ");
  return `no facilitator (${names}) lists exact payments on ${config.service.network.id} with the credentials given: nothing could be paid; see \`paysvc start --check\``;
}

/**
 * The configuration with the built-in facilitator running where it is listed (its entry given its URL), and what
 * stops it; the configuration as it is otherwise.
 */
async function withBuiltInFacilitator(config: StartConfig) {
  if (!config.builtInFacilitator) return { service: config.service, stop: async () => undefined, builtIn: undefined };
  const builtIn = await startBuiltInFacilitator(config.service.network, config.builtInFacilitator);
  const facilitators = config.service.facilitators.map((entry) =>
    entry.builtIn && !entry.url ? { ...entry, url: builtIn.url, auth: builtIn.auth } : entry,
  );
  return { service: { ...config.service, facilitators }, stop: () => builtIn.stop(), builtIn };
}

/**
 * The built-in facilitator where listed, the capability check (refused when no facilitator lists `exact` on the
 * network), then the app server; they stop together.
 */
async function serve(config: StartConfig): Promise<void> {
  const running = await withBuiltInFacilitator(config);
  if (running.builtIn) {
    console.log(`paysvc start: built-in facilitator ${running.builtIn.url}, settling from ${running.builtIn.address}`);
  }
  const capabilities = await checkFacilitators(gatewayFor(running.service), offeredSchemes(config.service));
  for (const capability of capabilities)
    console.log(`paysvc start: facilitator ${capability.name}: ${capability.summary}`);
  // A facilitator that answers and refuses (credentials, no exact) is a configuration to fix: refused. One that
  // does not answer is an outage: the app starts, serves what needs no facilitator, and paid calls get 503 with
  // Retry-After until one answers (the app asks /supported again then).
  const answered = capabilities.some(
    (capability) => capability.reached !== "unreachable" && capability.reached !== "failed",
  );
  if (!takesPayments(capabilities) && answered) {
    await running.stop();
    refuse([noExactProblem(config)]);
  }
  if (!takesPayments(capabilities)) {
    console.error(
      "paysvc start: no facilitator answers now: starting degraded (quotes, prepaid keys and free endpoints served; paid calls answered 503 with Retry-After until one answers)",
    );
  }
  // The app is handed the built-in facilitator's URL in the list and the secret it serves only its app with (a
  // fresh one at each start); other entries and their credentials as set. Never the facilitator's private key.
  const handed: Record<string, string> = running.builtIn
    ? {
        FACILITATORS: facilitatorsVariable(running.service.facilitators),
        FACILITATOR_URL: "",
        [credentialVariables(BUILT_IN_FACILITATOR, false).header]: running.builtIn.header,
      }
    : {};
  handed.FACILITATOR_PRIVATE_KEY = "";
  const app = spawn(process.execPath, [APP_SERVER, "--port", String(config.port), "--hostname", config.host], {
    stdio: ["ignore", "inherit", "inherit"],
    env: childEnvironment({ ...handed, NODE_ENV: "production" }) as NodeJS.ProcessEnv,
  });
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => app.kill(signal));
  const code = await new Promise<number>((resolve) =>
    app.on("exit", (exit, signal) => resolve(exit ?? (signal ? 0 : 1))),
  );
  await running.stop();
  process.exit(code);
}

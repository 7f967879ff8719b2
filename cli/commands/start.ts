import { spawn } from "node:child_process";
import type { Command } from "commander";
import { catalogModels, catalogProviders } from "../../config/catalog/model-catalog";
import { redactedDatabaseUrl } from "../../config/database-url";
import { collectProblems } from "../../config/configuration-error";
import { childEnvironment } from "../../config/env";
import { loadStartConfig, type StartConfig } from "../../config/start-config";
import { APP_SERVER, buildExists } from "../lib/app-build";
import { startBuiltInFacilitator } from "../lib/facilitator-server";
import { print } from "../lib/output";

/** A refused start: one line per problem, each naming what to set, and exit code 2; nothing was started. */
function refuse(problems: string[]): never {
  for (const problem of problems) console.error(`paysvc start: ${problem}`);
  process.exit(2);
}

/** What `--check` reports of a valid configuration. */
function summary(config: StartConfig) {
  const { service } = config;
  return {
    network: service.network.id,
    payTo: service.payTo,
    facilitator: config.builtInFacilitator
      ? `built-in, on ${config.builtInFacilitator.rpcUrl}`
      : service.facilitatorUrl,
    database: redactedDatabaseUrl(service.databaseUrl),
    catalog: config.catalogFile ?? "the spec's tables (PAYSVC_CATALOG unset)",
    listen: `${config.host}:${config.port}`,
    models: catalogModels(service.catalog).map(({ kind, model }) => ({
      id: model.id,
      kind,
      routes: model.routes.map((route) => `${route.provider}:${route.model}`),
    })),
    providers: catalogProviders(service.catalog).map(({ provider, route }) => ({ provider, baseUrl: route.baseUrl })),
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
Required: PAY_TO; FACILITATOR_URL, or CHAIN_RPC_URL + FACILITATOR_PRIVATE_KEY (the built-in facilitator);
a provider for every model sold (UPSTREAM_BASE_URL, or routes in the PAYSVC_CATALOG file); DATABASE_URL.
Refused as public: the development accounts as PAY_TO or FACILITATOR_PRIVATE_KEY. Refused as lost at a restart:
DATABASE_URL=:memory:. The production build must exist (npm run build).
Exit codes: 2 when something is missing or wrong (one line each on stderr, nothing started); with --check, 0 when
it would start.

Examples:
  $ PAY_TO=0x... FACILITATOR_URL=https://x402.example UPSTREAM_BASE_URL=https://api.example/v1 \\
    UPSTREAM_API_KEY=... DATABASE_URL=postgres://paysvc@db/paysvc paysvc start
  $ PAYSVC_CATALOG=/etc/paysvc/catalog.json paysvc start --check`,
    )
    .action(async (options: { check?: boolean; json?: boolean }) => {
      const problems: string[] = [];
      const config = collectProblems(problems, () => loadStartConfig());
      if (!buildExists()) problems.push("no production build: run `npm run build` first");
      if (problems.length > 0 || !config) refuse(problems);
      if (options.check) {
        const report = summary(config);
        print(options.json === true, report, () =>
          [
            `configuration ok: ${report.network}, pay-to ${report.payTo}`,
            `facilitator ${report.facilitator}`,
            `database    ${report.database}`,
            `catalog     ${report.catalog}`,
            `providers   ${report.providers.map((provider) => `${provider.provider} (${provider.baseUrl})`).join(", ")}`,
            `models      ${report.models.length}: ${report.models.map((model) => `${model.id} via ${model.routes.join(" > ")}`).join("; ")}`,
          ].join("\n"),
        );
        return;
      }
      await serve(config);
    });
}

/** The built-in facilitator where configured, then the app server; both stop together. */
async function serve(config: StartConfig): Promise<void> {
  const { service } = config;
  let facilitatorUrl = service.facilitatorUrl;
  let facilitator: Awaited<ReturnType<typeof startBuiltInFacilitator>> | undefined;
  if (config.builtInFacilitator) {
    facilitator = await startBuiltInFacilitator(service.network, config.builtInFacilitator);
    facilitatorUrl = facilitator.url;
    console.log(`paysvc start: built-in facilitator ${facilitator.url}, settling from ${facilitator.address}`);
  }
  const app = spawn(process.execPath, [APP_SERVER, "--port", String(config.port), "--hostname", config.host], {
    stdio: ["ignore", "inherit", "inherit"],
    env: childEnvironment({ FACILITATOR_URL: facilitatorUrl, NODE_ENV: "production" }) as NodeJS.ProcessEnv,
  });
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => app.kill(signal));
  const code = await new Promise<number>((resolve) =>
    app.on("exit", (exit, signal) => resolve(exit ?? (signal ? 0 : 1))),
  );
  await facilitator?.stop();
  process.exit(code);
}

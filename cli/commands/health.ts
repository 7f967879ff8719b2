import { loadPriceCatalog } from "../../config/service-config";
import type { Command } from "commander";
import { userPath } from "../lib/caller-directory";
import { checkOrigin } from "../lib/check-origin";
import { readDeploymentConfigs } from "../lib/deployment-config";
import { action, print, table } from "../lib/output";

interface Options {
  origin: string[];
  all?: boolean;
  configDir: string;
  timeout: string;
  json?: boolean;
}

export function registerHealthCommand(program: Command): void {
  program
    .command("health")
    .description(
      "Check deployments at once: /health, the discovery manifest, and a 402 quote for a chat model the deployment lists in /v1/models (named in the result) against the local catalog (PAYSVC_CATALOG)",
    )
    .option("--origin <url...>", "origins to check", [])
    .option("--all", "check every configured deployment")
    .option(
      "--config-dir <dir>",
      "where `paysvc config generate` wrote the deployments, relative to the current directory",
      "deployments",
    )
    .option("--timeout <ms>", "per-request timeout", "5000")
    .option("--json", "print JSON")
    .addHelpText(
      "after",
      "\nExamples:\n  $ paysvc health --all\n  $ paysvc health --origin https://base.pay.example https://polygon.pay.example --json",
    )
    .action(
      action(async (options: Options) => {
        const configs = readDeploymentConfigs(userPath(options.configDir));
        const origins = [
          ...new Set([
            ...options.origin.map((origin) => origin.replace(/\/+$/, "")),
            ...(options.all ? configs.map((config) => config.origin) : []),
          ]),
        ];
        if (origins.length === 0) throw new Error("nothing to check: pass --origin <url...> or --all");
        const models = loadPriceCatalog();
        let done = 0;
        const results = await Promise.all(
          origins.map(async (origin) => {
            const result = await checkOrigin(
              origin,
              configs.find((config) => config.origin === origin),
              Number(options.timeout),
              models,
            );
            done += 1;
            // Progress on stderr, so --json output stays clean.
            process.stderr.write(`[${done}/${origins.length}] ${origin} ${result.ok ? "ok" : "FAILED"}\n`);
            return result;
          }),
        );
        print(options.json === true, results, () =>
          table([
            ["ORIGIN", "CHECK", "RESULT", "DETAIL"],
            ...results.flatMap((result) =>
              result.checks.map((check) => [result.origin, check.name, check.ok ? "ok" : "FAIL", check.detail]),
            ),
          ]),
        );
        if (!results.every((result) => result.ok)) process.exitCode = 1;
      }),
    );
}

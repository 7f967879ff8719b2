import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Command } from "commander";
import { loadPriceCatalog } from "../../config/service-config";
import { discoveryDocuments } from "../../server/discovery/discovery-documents";
import { userPath } from "../lib/caller-directory";
import { factsOf, fileNameFor, readDeploymentConfigs } from "../lib/deployment-config";
import { action, print } from "../lib/output";

interface Options {
  network?: string;
  all?: boolean;
  configDir: string;
  out: string;
  json?: boolean;
}

export function registerDiscoveryCommand(program: Command): void {
  const discovery = program
    .command("discovery")
    .description("Discovery documents (llms.txt, AI-AGENTS.md, /.well-known/x402, openapi.json)");
  discovery
    .command("build")
    .description("Write each configured deployment's discovery documents, byte-identical to what it serves")
    .option("--network <caip2>", "one configured deployment")
    .option("--all", "every configured deployment")
    .option(
      "--config-dir <dir>",
      "where `paysvc config generate` wrote the deployments, relative to the current directory",
      "deployments",
    )
    .requiredOption("--out <dir>", "directory to write <network>/<document> into")
    .option("--json", "print JSON")
    .addHelpText(
      "after",
      "\nExamples:\n  $ paysvc discovery build --all --out dist/discovery\n  $ paysvc discovery build --network eip155:8453 --out public",
    )
    .action(
      action((options: Options) => {
        if (!options.all && !options.network) throw new Error("choose --network <caip2> or --all");
        const configDir = userPath(options.configDir);
        const out = userPath(options.out);
        const configs = readDeploymentConfigs(configDir).filter(
          (config) => options.all || config.network === options.network,
        );
        if (configs.length === 0) {
          throw new Error(
            `no deployment configured for ${options.network ?? "any network"} in ${configDir}; run paysvc config generate`,
          );
        }
        const models = loadPriceCatalog();
        const written: string[] = [];
        for (const config of configs) {
          const facts = factsOf(config, models);
          for (const [name, document] of Object.entries(discoveryDocuments)) {
            const path = join(out, fileNameFor(config.network), name);
            mkdirSync(dirname(path), { recursive: true });
            writeFileSync(path, document.render(facts));
            written.push(path);
          }
        }
        print(options.json === true, { files: written }, () => written.join("\n"));
      }),
    );
}

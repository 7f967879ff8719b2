import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { loadPriceCatalog } from "../../config/service-config";
import { defaultCatalog } from "../../config/catalog/default-catalog";
import { getNetwork } from "../../networks";
import { isApiError } from "../../server/core/errors";
import { quotablePaths, quoteRequest } from "../../server/endpoints/quote-request";
import { userPath } from "../lib/caller-directory";
import { action, print } from "../lib/output";

export function registerQuoteCommand(program: Command): void {
  program
    .command("quote")
    .description(
      "The price a paid request would be quoted, computed offline from the catalog (PAYSVC_CATALOG, else the spec's tables)",
    )
    .argument("<endpoint>", `a paid path: ${quotablePaths(defaultCatalog()).join(", ")}`)
    .option("--body <file>", "JSON request body (default: an empty body, for /prepaid/codes/auto)")
    .option("--network <caip2>", "network whose overhead applies", "eip155:137")
    .option("--json", "print JSON")
    .addHelpText(
      "after",
      "\nExamples:\n  $ paysvc quote /v1/chat/completions --body request.json\n  $ paysvc quote /prepaid/codes/auto --json",
    )
    .action(
      action(async (endpoint: string, options: { body?: string; network: string; json?: boolean }) => {
        const body = options.body ? readFileSync(userPath(options.body), "utf8") : undefined;
        const network = getNetwork(options.network);
        let quote;
        try {
          quote = await quoteRequest(endpoint, body, network, loadPriceCatalog());
        } catch (error) {
          if (isApiError(error)) throw new Error(`the service would answer ${error.status}: ${error.message}`);
          throw error;
        }
        const note = network.settlementGas ? " plus live settlement gas" : "";
        print(
          options.json === true,
          { endpoint, network: network.id, amount: quote.amount.toString(), quote: quote.display },
          () => `${endpoint} on ${network.id}: ${quote.display.total_usd} USD (${quote.amount} atomic units)${note}`,
        );
      }),
    );
}

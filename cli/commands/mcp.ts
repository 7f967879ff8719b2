import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { Command } from "commander";
import { ConfigurationError } from "../../config/env";
import { loadMcpConfig } from "../../config/mcp-env";
import { createMcpServer } from "../lib/mcp-server";
import { PayingClient } from "../lib/paying-client";

export function registerMcpCommand(program: Command): void {
  program
    .command("mcp")
    .description("Run a stdio MCP server that gives an agent list_models and chat_completion, paying within set limits")
    .option("--json", "print configuration errors as JSON")
    .addHelpText(
      "after",
      `
Configuration (environment):
  PAYSVC_WALLET_PRIVATE_KEY  the paying wallet's key, never printed or logged: 0x + 64 hex digits for EVM
                             deployments, or a 64-byte Solana keypair in base58 for Solana ones
  PAYSVC_SOLANA_RPC_URL      Solana JSON-RPC the wallet reads the mint and blockhash from (default: mainnet's)
  PAYSVC_ORIGIN              the deployment to use, e.g. https://pay.example
  PAYSVC_PAY_TO              the recipient you expect to pay (or PAYSVC_PAY_TO_BY_NETWORK as JSON by CAIP-2 id)
  PAYSVC_MAX_PAYMENT_USD     the most to pay for one request, e.g. 0.25

Examples:
  $ PAYSVC_WALLET_PRIVATE_KEY=0x... PAYSVC_ORIGIN=http://127.0.0.1:3000 \\
    PAYSVC_PAY_TO=0x70997970C51812dc3A010C7d01b50e0d17dc79C8 PAYSVC_MAX_PAYMENT_USD=0.25 paysvc mcp`,
    )
    .action(async (options: { json?: boolean }) => {
      let config;
      try {
        config = loadMcpConfig();
      } catch (error) {
        if (!(error instanceof ConfigurationError)) throw error;
        console.error(options.json ? JSON.stringify({ error: error.problems }) : error.message);
        process.exit(2);
      }
      // stdout is the protocol channel: nothing else may be written to it.
      await createMcpServer(new PayingClient(config)).connect(new StdioServerTransport());
    });
}

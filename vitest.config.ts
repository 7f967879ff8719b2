import { defineConfig } from "vitest/config";
import { LedgerCheckLast } from "./e2e/support/ledger-check-last";

export default defineConfig({
  test: {
    sequence: { sequencer: LedgerCheckLast },
    projects: [
      {
        test: {
          name: "unit",
          include: ["{server,config,networks,cli}/**/*.test.ts"],
        },
      },
      {
        test: {
          name: "e2e",
          include: ["e2e/**/*.test.ts"],
          globalSetup: ["e2e/support/global-setup.ts"],
          // One chain and one pay-to are shared, and tests assert exact balances: files run one at a time.
          fileParallelism: false,
          testTimeout: 60_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});

import { configDefaults, defineConfig } from "vitest/config";
import { TEST_WORKERS } from "./e2e/support/test-workers";
import { SlowestFirst } from "./vitest-sequencer";

/** The e2e file that reads every shared ledger back against its chain: a project of its own, run after the rest. */
const LEDGER_CHECK_FILE = "e2e/ledger-agrees-with-chain.test.ts";

const e2eTimeouts = { testTimeout: 60_000, hookTimeout: 180_000 };

export default defineConfig({
  test: {
    // By path, not imported: Vite warns about an extensionless import here, and TypeScript refuses a .ts one.
    reporters: ["default", "./vitest-no-skips.ts"],
    sequence: { sequencer: SlowestFirst },
    // Unit and e2e files share the workers; each worker running an e2e file has a shared stack of its own.
    maxWorkers: TEST_WORKERS,
    projects: [
      {
        test: {
          name: "unit",
          include: ["{server,config,networks,cli}/**/*.test.ts"],
          // Some start a real PostgreSQL server (initdb included), seconds on a busy two-core machine.
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: "e2e",
          include: ["e2e/**/*.test.ts"],
          exclude: [...configDefaults.exclude, LEDGER_CHECK_FILE],
          globalSetup: ["e2e/support/global-setup.ts"],
          // A worker runs its e2e files one after another in one process, loading the clients and the x402 and
          // chain libraries once rather than once a file: they set up nothing global, and what they start they stop.
          isolate: false,
          ...e2eTimeouts,
        },
      },
      {
        test: {
          name: "e2e-ledger",
          include: [LEDGER_CHECK_FILE],
          // The same stacks (started once for both projects), read once every journey on them has ended.
          globalSetup: ["e2e/support/global-setup.ts"],
          sequence: { groupOrder: 1 },
          ...e2eTimeouts,
        },
      },
    ],
  },
});

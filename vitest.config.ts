import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** The e2e file that reads the whole shared ledger back against the chain runs after every journey. */
const LAST_E2E_FILE = "e2e/ledger-agrees-with-chain.test.ts";

/** Vitest's own order, with that file moved to the end. */
class LedgerCheckLast extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const isLast = (spec: TestSpecification) => spec.moduleId.endsWith(LAST_E2E_FILE);
    return [...sorted.filter((spec) => !isLast(spec)), ...sorted.filter(isLast)];
  }
}

export default defineConfig({
  test: {
    // By path, not imported: Vite warns about an extensionless import here, and TypeScript refuses a .ts one.
    reporters: ["default", "./vitest-no-skips.ts"],
    sequence: { sequencer: LedgerCheckLast },
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

import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { configDefaults, defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";

// Nothing here is imported from another file of ours: Vite warns about an extensionless import in its config, and
// TypeScript refuses a .ts one.

/**
 * How many test files run at once, and so how many shared e2e stacks the global setup starts (one per worker). Most
 * of an e2e file's time is spent waiting on other processes (the app, the chain, a PostgreSQL server, Chromium), so
 * more files than cores keep both cores of the machine busy.
 */
const WORKERS = Number(process.env.PAYSVC_TEST_WORKERS ?? 3);

/** The e2e file that reads every shared ledger back against its chain: a project of its own, run after the rest. */
const LEDGER_CHECK_FILE = "e2e/ledger-agrees-with-chain.test.ts";

/**
 * Seconds each test file took in a full run on a two-core machine (`npm run test:durations` writes them from a
 * run's JSON report): a fresh clone has no vitest cache to order its first run by.
 */
const recorded: Record<string, number> = JSON.parse(
  readFileSync(new URL("./test-durations.json", import.meta.url), "utf8"),
);

/** What a file not yet recorded is assumed to take: an e2e file starts its own processes, a unit file rarely. */
const UNRECORDED_SECONDS = { e2e: 20, unit: 1 } as Record<string, number>;

/**
 * The slowest files start first, whatever their project, so that the last file to finish is a short one; a group
 * of a later `sequence.groupOrder` still waits for the earlier ones. A file's time is this machine's last run of it
 * where vitest remembers one, else the recorded table.
 */
class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const seconds = (spec: TestSpecification) => {
      const path = relative(this.ctx.config.root, spec.moduleId);
      const cached = this.ctx.cache.getFileTestResults(`${spec.project.name}:${path}`);
      if (cached && !cached.failed) return cached.duration / 1000;
      return recorded[path] ?? UNRECORDED_SECONDS[spec.project.name] ?? 1;
    };
    return [...files].sort(
      (a, b) => a.project.config.sequence.groupOrder - b.project.config.sequence.groupOrder || seconds(b) - seconds(a),
    );
  }
}

const e2eTimeouts = { testTimeout: 60_000, hookTimeout: 180_000 };

export default defineConfig({
  test: {
    // By path, not imported (see above).
    reporters: ["default", "./vitest-no-skips.ts"],
    sequence: { sequencer: SlowestFirst },
    // Unit and e2e files share the workers; each worker running an e2e file has a shared stack of its own.
    maxWorkers: WORKERS,
    projects: [
      {
        test: {
          name: "unit",
          include: ["{server,config,networks,cli}/**/*.test.ts"],
          // A worker runs its unit files one after another in one process, loading shared modules once: no file
          // mocks a module, and what a file starts or changes it stops or restores.
          isolate: false,
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

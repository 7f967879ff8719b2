import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

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
export class SlowestFirst extends BaseSequencer {
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

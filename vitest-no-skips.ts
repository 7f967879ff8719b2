import type { Reporter, TestCase, TestModule } from "vitest/node";

/**
 * No test in this project may be skipped. A skip hides work the run claims to have done: `it.skip`, `it.todo`, a
 * failed `beforeAll` (whose tests vitest marks skipped rather than failed) or an `.only` left behind all leave the
 * summary looking nearly green. This reporter names each such test and fails the run.
 */
export default class NoSkippedTests implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const notRun = testModules.flatMap((testModule) =>
      [...testModule.children.allTests()].filter((test) => isNotRun(test)).map((test) => describeTest(test)),
    );
    if (notRun.length === 0) return;
    process.stderr.write(
      `\nNo test may be skipped, but ${notRun.length} did not run:\n${notRun.map((line) => `  ${line}\n`).join("")}\n`,
    );
    // Vitest sets its own exit code before calling this hook and never lowers it afterwards, so this 1 survives to
    // the process's exit.
    process.exitCode = 1;
  }
}

// A todo is reported as skipped; "pending" once the run is over means the test never finished (a run cut short).
const isNotRun = (test: TestCase) => {
  const state = test.result().state;
  return state === "skipped" || state === "pending";
};

const describeTest = (test: TestCase) => {
  const result = test.result();
  const note = result.state === "skipped" && result.note ? `: ${result.note}` : "";
  const why = test.options.mode === "todo" ? "todo" : `${result.state}${note}`;
  return `${test.module.relativeModuleId} > ${test.fullName} (${why})`;
};

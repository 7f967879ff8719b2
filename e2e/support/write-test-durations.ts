import { readFileSync, writeFileSync } from "node:fs";
import { relative } from "node:path";

/**
 * Writes test-durations.json, the seconds each test file took, from a vitest JSON report
 * (`vitest run --reporter=json --outputFile.json=<file>`): the sequencer starts the slowest files first by it when
 * vitest has no results of its own (a fresh clone). Usage: npm run test:durations -- <report.json>
 */
const [reportPath] = process.argv.slice(2);
if (!reportPath) throw new Error("usage: npm run test:durations -- <vitest JSON report>");
const report = JSON.parse(readFileSync(reportPath, "utf8")) as {
  testResults: { name: string; startTime: number; endTime: number }[];
};
const seconds = report.testResults
  .map((file) => [relative(process.cwd(), file.name), Math.round((file.endTime - file.startTime) / 100) / 10] as const)
  .sort(([a], [b]) => (a < b ? -1 : 1));
writeFileSync("test-durations.json", `${JSON.stringify(Object.fromEntries(seconds), null, 2)}\n`);
console.log(`test-durations.json: ${seconds.length} files`);

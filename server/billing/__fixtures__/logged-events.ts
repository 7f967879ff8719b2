import { afterEach, beforeEach, vi, type MockInstance } from "vitest";

type LoggedEvent = [level: string, event: string, fields: Record<string, unknown>];

/**
 * What the real logger (server/core/log.ts) writes while each test of the file runs, read back from the process's
 * standard output and error as `[level, event, fields]`: no mock of the logger, so the module stays one instance
 * among test files that share a worker. Call at the top level of a test file.
 */
export function captureLoggedEvents(): () => Promise<LoggedEvent[]> {
  const lines: string[] = [];
  let spies: MockInstance[] = [];
  const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
  beforeEach(async () => {
    // Lines logged before this test are written first, where they belong.
    await nextTurn();
    spies = [process.stdout, process.stderr].map((stream) =>
      vi.spyOn(stream, "write").mockImplementation((chunk: string | Uint8Array) => {
        lines.push(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8"));
        return true;
      }),
    );
  });
  afterEach(() => {
    for (const spy of spies) spy.mockRestore();
    lines.length = 0;
  });
  // The logger writes its lines once the current work is done.
  return async () => {
    await nextTurn();
    return lines
      .flatMap((text) => text.split("\n"))
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((entry) => typeof entry.event === "string")
      .map(({ time: _time, level, event, ...fields }) => [String(level), String(event), fields]);
  };
}

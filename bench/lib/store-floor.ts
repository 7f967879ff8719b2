// The part of a prepaid call's CPU that its budget's safety costs on SQLite: the two commits each call makes (its
// reservation before the upstream call, its charge before the answer), through the app's own store, in a loop in
// this process on a file of its own. Warm code, no HTTP: the floor under the app's figure, not a share of it.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStorage } from "../../server/storage/open-storage";

/** CPU of this process per reserve + settle, in ms, over `calls` calls after as many to warm up. */
export async function storeCommitsCpuMs(calls: number): Promise<number> {
  const folder = mkdtempSync(join(tmpdir(), "paysvc-store-floor-"));
  const storage = await openStorage(`file:${join(folder, "floor.sqlite")}`);
  try {
    const code = "pk-store-floor";
    const model = "vendor-a/gpt-6-luna";
    await storage.prepaidKeys.issue(code, model, 2 ** 40, undefined);
    const call = async () => {
      const reservation = await storage.prepaidKeys.reserve(
        code,
        model,
        { inputTokens: 8, maxOutputTokens: 16 },
        60_000,
      );
      if (!reservation) throw new Error("store floor: the key refused a reservation");
      await storage.prepaidKeys.settle(reservation, 12);
    };
    for (let index = 0; index < calls; index++) await call();
    const before = process.cpuUsage();
    for (let index = 0; index < calls; index++) await call();
    const used = process.cpuUsage(before);
    return (used.user + used.system) / 1000 / calls;
  } finally {
    await storage.close();
    rmSync(folder, { recursive: true, force: true });
  }
}

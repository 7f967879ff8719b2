import { BaseSequencer, type TestSpecification } from "vitest/node";

/** The e2e file that reads the whole shared ledger back against the chain: it runs after every journey. */
export const LAST_E2E_FILE = "e2e/ledger-agrees-with-chain.test.ts";

/** Vitest's own order, with the ledger check moved to the end. */
export class LedgerCheckLast extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const isLast = (spec: TestSpecification) => spec.moduleId.endsWith(LAST_E2E_FILE);
    return [...sorted.filter((spec) => !isLast(spec)), ...sorted.filter(isLast)];
  }
}

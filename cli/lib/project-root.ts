import { join } from "node:path";

/**
 * The package folder: the CLI's working directory (cli/bin.mjs moves there before it loads the CLI), and the tests'
 * and benchmarks'. Files of the package are found from here, not from a module's own location, which its compiled
 * form (dist/cli/) does not keep.
 */
export const PROJECT_ROOT = process.cwd();

/** A file of the package, by its path inside it. */
export const packageFile = (...path: string[]) => join(PROJECT_ROOT, ...path);

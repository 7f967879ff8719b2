/**
 * How many test files run at once (vitest's maxWorkers), and so how many shared e2e stacks the global setup starts:
 * one per worker. Most of an e2e file's time is spent waiting on other processes (the app, the chain, a
 * PostgreSQL server, Chromium), so more files than cores keep both cores busy; PAYSVC_TEST_WORKERS changes it.
 */
export const TEST_WORKERS = Number(process.env.PAYSVC_TEST_WORKERS ?? 3);

// The development upstream in a process of its own, for the benchmark: `node --import tsx bench/lib/upstream-process.ts
// <deltaDelayMs> <streamDeltas>` prints its base URL once it listens. Run in the benchmark's own process, the direct
// calls would reach it without leaving their event loop, while the gateway's calls cross two processes.
import { startLocalUpstream } from "../../cli/dev-stack/local-upstream";

const [deltaDelayMs, streamDeltas] = process.argv.slice(2).map(Number);
const upstream = await startLocalUpstream({ port: 0, deltaDelayMs, streamDeltas });
console.log(`${upstream.url}/v1`);

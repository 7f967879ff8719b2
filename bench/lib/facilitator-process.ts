// The local facilitator in a process of its own, for the benchmark: `node --import tsx bench/lib/facilitator-process.ts
// <network> <chain RPC URL>` prints its URL once it listens. It settles from the stack's usual facilitator account,
// on the embedded chain.
import { loadLaunchConfig } from "../../config/env";
import { devAccount, FACILITATOR_ACCOUNT_INDEX } from "../../server/local-stack/dev-accounts";
import { startLocalFacilitator } from "../../server/local-stack/local-facilitator";

const [network, rpcUrl] = process.argv.slice(2);
const facilitator = await startLocalFacilitator({
  network: loadLaunchConfig({ NETWORK: network }).network,
  rpcUrl: rpcUrl!,
  privateKey: devAccount(FACILITATOR_ACCOUNT_INDEX).privateKey,
  port: 0,
  embeddedChain: true,
});
console.log(facilitator.url);

// The local facilitator in a process of its own, for the benchmark: `node --import tsx bench/lib/facilitator-process.ts
// <network> <chain RPC URL>` prints its URL once it listens. It settles from the stack's usual facilitator account,
// on the embedded chain.
import { loadLaunchConfig } from "../../config/dev-launch-config";
import { devAccount, FACILITATOR_ACCOUNT_INDEX } from "../../cli/dev-stack/dev-accounts";
import { startFacilitatorServer } from "../../cli/lib/facilitator-server";

const [network, rpcUrl] = process.argv.slice(2);
const facilitator = await startFacilitatorServer({
  network: loadLaunchConfig({ NETWORK: network }).network,
  rpcUrl: rpcUrl!,
  privateKey: devAccount(FACILITATOR_ACCOUNT_INDEX).privateKey,
  port: 0,
  embeddedChain: true,
});
console.log(facilitator.url);

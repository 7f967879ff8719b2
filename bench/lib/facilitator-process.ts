// The local facilitator in a process of its own, for the benchmark: `node --import tsx bench/lib/facilitator-process.ts
// <network> <chain RPC URL> <pay-to> <secret>` prints its URL once it listens. It settles from the stack's usual
// facilitator account, on the embedded chain, payments to <pay-to> asked with `Authorization: Bearer <secret>`.
import { loadLaunchConfig } from "../../config/dev-launch-config";
import { devAccount, FACILITATOR_ACCOUNT_INDEX } from "../../cli/dev-stack/dev-accounts";
import { startFacilitatorServer } from "../../cli/lib/facilitator-server";

const [network, rpcUrl, payTo, secret] = process.argv.slice(2);
const facilitator = await startFacilitatorServer({
  network: loadLaunchConfig({ NETWORK: network }).network,
  rpcUrl: rpcUrl!,
  privateKey: devAccount(FACILITATOR_ACCOUNT_INDEX).privateKey,
  port: 0,
  embeddedChain: true,
  access: { payTo: payTo!, secret: secret! },
});
console.log(facilitator.url);

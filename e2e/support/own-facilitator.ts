import { createTestClient, http, parseEther } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { facilitatorAccess, startFacilitatorServer } from "../../cli/lib/facilitator-server";
import { polygon, stack } from "./payments";

/**
 * A built-in facilitator of a deployment's own on the shared chain, as `paysvc start` runs one: it serves requests
 * with its app's secret (`authHeader`, `Name: value`), only for payments to `payTo`, and settles them with gas from a
 * key of its own, funded here.
 */
export async function startOwnFacilitator(payTo: string) {
  const key = generatePrivateKey();
  await createTestClient({ mode: "anvil", transport: http(stack().chainRpcUrl) }).setBalance({
    address: privateKeyToAccount(key).address,
    value: parseEther("10"),
  });
  const access = facilitatorAccess(payTo);
  const started = await startFacilitatorServer({
    network: polygon,
    rpcUrl: stack().chainRpcUrl,
    privateKey: key,
    port: 0,
    embeddedChain: true,
    access,
  });
  return { ...started, auth: access.auth, authHeader: access.header };
}

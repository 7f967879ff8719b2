import { x402Facilitator } from "@x402/core/facilitator";
import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { toFacilitatorEvmSigner } from "@x402/evm";
import { registerExactEvmScheme } from "@x402/evm/exact/facilitator";
import { createWalletClient, http, publicActions } from "viem";
import { nonceManager, privateKeyToAccount } from "viem/accounts";
import type { EvmNetwork } from "../../networks";
import { listen, readJson, sendJson, type JsonHttpServer } from "./json-http-server";
import { chainFor } from "./local-chain";

/**
 * A facilitator served over HTTP (POST /verify, POST /settle, GET /supported) exactly as a remote one is, built
 * on the official x402 facilitator and its EVM "exact" scheme. It pays settlement gas from `privateKey`.
 */
export async function startLocalFacilitator(options: {
  network: EvmNetwork;
  rpcUrl: string;
  privateKey: `0x${string}`;
  port: number;
}): Promise<JsonHttpServer & { address: `0x${string}` }> {
  // One nonce sequence for every settlement: concurrent settles from one account must not reuse a nonce.
  const account = privateKeyToAccount(options.privateKey, { nonceManager });
  const client = createWalletClient({
    account,
    chain: chainFor(options.network, options.rpcUrl),
    transport: http(options.rpcUrl),
  }).extend(publicActions);
  // viem's newer verifyTypedData overloads are wider than the signer type @x402/evm declares; the runtime shape
  // is exactly what it expects (its own docs pass a viem client extended with public actions).
  type SignerClient = Parameters<typeof toFacilitatorEvmSigner>[0];
  const signer = toFacilitatorEvmSigner({ ...client, address: account.address } as unknown as SignerClient);
  const facilitator = registerExactEvmScheme(new x402Facilitator(), { signer, networks: options.network.id });

  const server = await listen(
    async (request, response) => {
      const path = (request.url ?? "/").split("?")[0];
      if (request.method === "GET" && path === "/supported") {
        return sendJson(response, 200, facilitator.getSupported());
      }
      if (request.method === "POST" && (path === "/verify" || path === "/settle")) {
        let body: { paymentPayload?: PaymentPayload; paymentRequirements?: PaymentRequirements };
        try {
          body = (await readJson(request)) as typeof body;
        } catch {
          return sendJson(response, 400, { error: "request body must be JSON" });
        }
        if (!body.paymentPayload || !body.paymentRequirements) {
          return sendJson(response, 400, { error: "paymentPayload and paymentRequirements are required" });
        }
        const result =
          path === "/verify"
            ? await facilitator.verify(body.paymentPayload, body.paymentRequirements)
            : await facilitator.settle(body.paymentPayload, body.paymentRequirements);
        return sendJson(response, 200, result);
      }
      sendJson(response, 404, { error: "not found" });
    },
    options.port,
    "local facilitator",
  );
  return { ...server, address: account.address };
}

import { listen, readBody } from "../../cli/lib/json-http-server";

/** ERC-20 `balanceOf(address)`'s selector, as it begins a call's data. */
const BALANCE_OF = "70a08231";

/**
 * A JSON-RPC endpoint in front of the chain's, for reads that come back late: every request is forwarded at once;
 * once `gateBalanceOf(payer)` is armed, the first request reading that payer's USDC balance gets the chain's answer
 * of that moment but is held until `openGate`, so that something can happen on chain in between (the answer is then
 * stale, as a slow node's would be).
 */
export async function startRpcProxy(target: string) {
  let gatedPayer: string | undefined;
  let waiting: (() => void) | undefined;
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const server = await listen(
    async (request, response) => {
      const body = await readBody(request);
      const answer = await fetch(target, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: new Uint8Array(body),
      });
      const text = await answer.text();
      const read = body.toString("utf8").toLowerCase();
      if (gatedPayer && read.includes(BALANCE_OF) && read.includes(gatedPayer)) {
        gatedPayer = undefined;
        waiting?.();
        await gate;
      }
      response.writeHead(answer.status, { "content-type": "application/json" });
      response.end(text);
    },
    0,
    "rpc proxy",
  );
  return {
    url: server.url,
    /** Resolves once a read of `payer`'s balance has been answered by the chain and waits at the gate. */
    gateBalanceOf(payer: string): Promise<void> {
      gatedPayer = payer.toLowerCase().slice(2);
      return new Promise<void>((resolve) => (waiting = resolve));
    },
    /** Lets the held read through. */
    openGate: () => release(),
    stop: () => server.stop(),
  };
}

import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { HTTPFacilitatorClient, x402ResourceServer } from "@x402/core/server";
import type { PaymentRequirements } from "@x402/core/types";
import { InMemoryChannelStorage } from "@x402/evm/batch-settlement/server";
import { ExactEvmScheme } from "@x402/evm/exact/server";
import { UptoEvmScheme } from "@x402/evm/upto/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHANNEL_AUTHORIZER_ACCOUNT_INDEX, devAccount } from "../../cli/dev-stack/dev-accounts";
import { getNetwork } from "../../networks";
import { channelScheme } from "./channel-scheme";
import { channelMinDeposit, RequirementsTemplates, type RequirementTerms } from "./requirements-templates";

const network = getNetwork("eip155:137");
if (network.kind !== "evm") throw new Error("an EVM network is needed");
const { usdc } = network;
const payTo = "0x2546BcD3c84621e976D8185a91A922aE77ECEc30";

// A facilitator over real HTTP, as the official client meets one: /supported lists the three schemes on the network.
const facilitator: Server = createServer((request, response) => {
  request.resume();
  request.on("end", () => {
    const kind = (scheme: string, extra?: object) => ({ x402Version: 2, scheme, network: network.id, extra });
    response.writeHead(200, { "content-type": "application/json" });
    response.end(
      JSON.stringify({
        kinds: [
          kind("exact"),
          kind("upto", { facilitatorAddress: "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266" }),
          kind("batch-settlement"),
        ],
        extensions: [],
        signers: {},
      }),
    );
  });
});

const channels = channelScheme(
  payTo,
  {
    authorizerKey: devAccount(CHANNEL_AUTHORIZER_ACCOUNT_INDEX).privateKey as `0x${string}`,
    withdrawDelaySeconds: 86_400,
    claims: { intervalMs: 60_000, thresholdAtomic: 1_000_000n, checkMs: 60_000 },
  },
  new InMemoryChannelStorage(),
);
let server: x402ResourceServer;
beforeAll(async () => {
  await new Promise<void>((resolve) => facilitator.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(facilitator.address() as AddressInfo).port}`;
  server = new x402ResourceServer(new HTTPFacilitatorClient({ url }))
    .register(network.id, new ExactEvmScheme())
    .register(network.id, new UptoEvmScheme())
    .register(network.id, channels);
  await server.initialize();
});
afterAll(() => new Promise<void>((resolve) => facilitator.close(() => resolve())));

type Scheme = "exact" | "upto" | "batch-settlement";
/** The requirements as the resource server builds them, each time. */
async function built(scheme: Scheme, terms: RequirementTerms): Promise<PaymentRequirements> {
  const [requirements] = await server.buildPaymentRequirements({
    scheme,
    network: network.id,
    payTo: terms.payTo,
    maxTimeoutSeconds: terms.maxTimeoutSeconds,
    price: { amount: terms.amount.toString(), asset: usdc.address, extra: { ...usdc.eip712 } },
  });
  return requirements!;
}

const amounts = [1007n, 1n, 4_733_000n, 1007n, 123_456_789n];
const terms = (amount: bigint): RequirementTerms => ({ amount, payTo, maxTimeoutSeconds: 300 });

describe("requirements copied from a template", () => {
  it("are the resource server's own, for every scheme and amount", async () => {
    let builds = 0;
    const templates = new RequirementsTemplates(
      (scheme, asked) => {
        builds += 1;
        return built(scheme, asked);
      },
      { "batch-settlement": channelMinDeposit(channels) },
    );
    for (const scheme of ["exact", "upto", "batch-settlement"] as const) {
      for (const amount of amounts) {
        expect(await templates.requirements(scheme, terms(amount))).toEqual(await built(scheme, terms(amount)));
      }
    }
    // Two builds a scheme, to check the template; none after.
    expect(builds).toBe(6);
    // Another pay-to is another template.
    const other = { ...terms(1007n), payTo: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8" };
    expect(await templates.requirements("exact", other)).toEqual(await built("exact", other));
    expect(builds).toBe(8);
  });

  it("are the same frozen object for an amount quoted again, and the resource server's for each amount", async () => {
    const templates = new RequirementsTemplates(built, { "batch-settlement": channelMinDeposit(channels) });
    for (const scheme of ["exact", "upto", "batch-settlement"] as const) {
      // The first quote of a scheme makes its template; the amounts after it are kept.
      await templates.requirements(scheme, terms(1n));
      const first = await templates.requirements(scheme, terms(1007n));
      const again = await templates.requirements(scheme, terms(1007n));
      expect(again).toBe(first);
      expect(Object.isFrozen(first) && Object.isFrozen(first.extra)).toBe(true);
      expect(first).toEqual(await built(scheme, terms(1007n)));
      const other = await templates.requirements(scheme, terms(4_733_000n));
      expect(other).not.toBe(first);
      expect(other).toEqual(await built(scheme, terms(4_733_000n)));
    }
  });

  it("are built each time where they differ otherwise between amounts", async () => {
    let builds = 0;
    // A channel's minimum deposit follows the amount: without the scheme's rule, no template holds.
    const templates = new RequirementsTemplates((scheme, asked) => {
      builds += 1;
      return built(scheme, asked);
    });
    for (const amount of amounts) {
      expect(await templates.requirements("batch-settlement", terms(amount))).toEqual(
        await built("batch-settlement", terms(amount)),
      );
    }
    expect(builds).toBe(2 + amounts.length);
  });
});

import { InMemoryChannelStorage, type Channel, type ChannelStorage } from "@x402/evm/batch-settlement/server";
import { describe, expect, it } from "vitest";
import { engines, useTestDatabases, useTwoInstances } from "../../cli/dev-stack/test-databases";
import type { Storage } from "./storage";

const databases = useTestDatabases();

const address = (digit: string) => `0x${digit.repeat(40)}` as `0x${string}`;

/** A channel as the scheme's server keeps it; amounts beyond 64 bits, to show they stay exact. */
function channel(id: string, overrides: Partial<Channel> = {}): Channel {
  return {
    channelId: id,
    channelConfig: {
      payer: address("a"),
      payerAuthorizer: address("b"),
      receiver: address("c"),
      receiverAuthorizer: address("d"),
      token: address("e"),
      withdrawDelay: 900,
      salt: `0x${"0".repeat(64)}`,
    },
    chargedCumulativeAmount: "0",
    signedMaxClaimable: "123456789012345678901234567890",
    signature: `0x${"ab".repeat(65)}`,
    balance: "123456789012345678901234567890",
    totalClaimed: "0",
    withdrawRequestedAt: 0,
    refundNonce: 0,
    lastRequestTimestamp: 1_790_000_000_000,
    ...overrides,
  };
}

const ID = `0x${"1f".repeat(32)}`;

/** One scripted sequence of the interface's calls, and what each answered. */
async function script(storage: ChannelStorage): Promise<unknown[]> {
  const answers: unknown[] = [];
  answers.push(await storage.get(ID));
  answers.push(await storage.updateChannel(ID, () => undefined));
  answers.push(await storage.updateChannel(ID, () => channel(ID)));
  answers.push(await storage.updateChannel(ID, (current) => current));
  const pendingRequest = { pendingId: "pending-1", signedMaxClaimable: "1500", expiresAt: 1_790_000_060_000 };
  answers.push(
    await storage.updateChannel(ID, (current) => ({ ...current!, pendingRequest, onchainSyncedAt: 1_790_000_000_500 })),
  );
  answers.push(await storage.get(ID.toUpperCase().replace("0X", "0x")));
  answers.push(
    await storage.updateChannel(ID, (current) => {
      const { pendingRequest: _, ...rest } = current!;
      return { ...rest, chargedCumulativeAmount: "1500", signedMaxClaimable: "1500" };
    }),
  );
  answers.push(await storage.updateChannel(`0x${"2e".repeat(32)}`, () => channel(`0x${"2e".repeat(32)}`)));
  answers.push(await storage.list());
  answers.push(await storage.updateChannel(ID, () => undefined));
  answers.push(await storage.list());
  return answers;
}

describe.each(engines)("batch-settlement channels on %s", (engine) => {
  /** Two storages over one new database, as two instances have. */
  const twoInstances = useTwoInstances(databases, engine);

  it("answers every call as the SDK's own in-memory storage does, amounts exact", async () => {
    const [storage] = await twoInstances();
    const ours = await script(storage.channels);
    expect(ours).toEqual(await script(new InMemoryChannelStorage()));
    // The channel written with a pending request, read back whole.
    expect(ours[5]).toMatchObject({
      signedMaxClaimable: "123456789012345678901234567890",
      onchainSyncedAt: 1_790_000_000_500,
      pendingRequest: { pendingId: "pending-1", signedMaxClaimable: "1500", expiresAt: 1_790_000_060_000 },
    });
  });

  it("applies concurrent updates from two instances one after the other: none is lost", async () => {
    const [first, second] = await twoInstances();
    await first.channels.updateChannel(ID, () => channel(ID));
    let calls = 0;
    const charge = (storage: Storage) =>
      storage.channels.updateChannel(ID, (current) => {
        calls += 1;
        const charged = BigInt(current!.chargedCumulativeAmount) + 7n;
        return { ...current!, chargedCumulativeAmount: String(charged) };
      });
    const results = await Promise.all(Array.from({ length: 40 }, (_, index) => charge(index % 2 ? first : second)));
    expect(results.every((result) => result.status === "updated")).toBe(true);
    expect((await second.channels.get(ID))!.chargedCumulativeAmount).toBe(String(40 * 7));
    // Each of the 40 charged once: its callback ran again only when another had written first.
    expect(calls).toBeGreaterThanOrEqual(40);
  });

  it("refuses an amount that is not a whole number of atomic units, writing nothing", async () => {
    const [storage] = await twoInstances();
    for (const wrong of ["1.5", "-1", "1e3", ""]) {
      await expect(
        storage.channels.updateChannel(ID, () => channel(ID, { chargedCumulativeAmount: wrong })),
      ).rejects.toThrow(/whole number of atomic units/);
    }
    expect(await storage.channels.list()).toEqual([]);
  });
});

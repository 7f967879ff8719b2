import { Challenge } from "mppx";
import { describe, expect, it } from "vitest";
import type { BillableCall } from "../billing/payment-method";
import { challengeHeader } from "./charge-challenge";

const terms = { secretKey: "a deployment's secret", chainId: 137, decimals: 6, lifetimeSeconds: 300 };
const exact = {
  scheme: "exact",
  network: "eip155:137",
  amount: "1024",
  asset: "0x3c499c542cef5e3811e1192ce70d8cc03d5c3359",
  payTo: "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
  maxTimeoutSeconds: 300,
  extra: {},
} as const;
const call = (description: string) =>
  ({ resourceUrl: "https://api.example/v1/chat/completions", quote: { description } }) as unknown as BillableCall;

describe("the MPP challenge", () => {
  it("is what mppx's Challenge.from and serialize write for the same fields, byte for byte, and verifies", () => {
    for (const description of ["Chat completion with vendor-a/gpt-6-luna", 'A "quoted" \\ description — café']) {
      const header = challengeHeader(terms, call(description), exact);
      const parsed = Challenge.deserialize(header);
      expect(parsed).toMatchObject({
        realm: "api.example",
        method: "evm",
        intent: "charge",
        description,
        request: {
          amount: "1024",
          currency: "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359",
          recipient: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
          methodDetails: { chainId: 137, credentialTypes: ["authorization"], decimals: 6 },
        },
      });
      expect(Challenge.verify(parsed, { secretKey: terms.secretKey })).toBe(true);
      expect(Challenge.verify(parsed, { secretKey: "another deployment's" })).toBe(false);
      const { id: _id, ...fields } = parsed;
      const rebuilt = Challenge.from({ ...fields, secretKey: terms.secretKey });
      expect(rebuilt.id).toBe(parsed.id);
      expect(Challenge.serialize(rebuilt)).toBe(header);
      expect(Date.parse(parsed.expires!) - Date.now()).toBeGreaterThan(295_000);
    }
  });

  it("is another challenge each time, for the same call", () => {
    const first = Challenge.deserialize(challengeHeader(terms, call("x"), exact));
    const second = Challenge.deserialize(challengeHeader(terms, call("x"), exact));
    expect(first.id).not.toBe(second.id);
    expect(first.opaque).not.toBe(second.opaque);
  });
});

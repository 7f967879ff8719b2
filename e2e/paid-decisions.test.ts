import { describe, expect, it } from "vitest";
import { balances, ledgerRow, officialPayment, postJson, quote, stack } from "./support/payments";
import { atomicToDecimal } from "../server/core/money";

const PATH = "/jev";
const payer = () => stack().payers[5]!;

const decision = (state: string) => ({
  model: "jev-latest",
  state,
  questions: {
    count: { type: "noul", instructions: "How many ships are in the harbor?" },
    color: { type: "choice", instructions: "Which colour is the lighthouse? One of: red, white, striped" },
    safety: { type: "score", instructions: "How safe is it to sail tonight?" },
  },
});

async function paidPost(body: unknown) {
  const signature = await officialPayment(payer().privateKey, await quote(PATH, body));
  return { response: await postJson(PATH, body, { "PAYMENT-SIGNATURE": signature }), signature };
}

describe("paid structured decisions", () => {
  it("answers all three question types in their shapes, for exactly the quote", async () => {
    const body = decision("Calm sea, light wind, twelve ships moored, a red and white lighthouse.");
    const required = await quote(PATH, body);
    const breakdown = required.extensions?.quote as { input_tokens: number; output_usd: string };
    expect(breakdown.output_usd).toBe("0");
    // 0.12 USD per 1M input tokens = 0.12 atomic units per token, rounded up, plus 1000 overhead.
    expect(BigInt(required.accepts[0]!.amount)).toBe(1000n + BigInt(Math.ceil((breakdown.input_tokens * 12) / 100)));
    const price = BigInt(required.accepts[0]!.amount);
    const before = await balances(payer().address);

    const { response } = await paidPost(body);
    expect(response.status).toBe(200);
    const answer = await response.json();
    expect(answer.model).toBe("jev-2026-11-01");
    expect(Object.keys(answer.answers).sort()).toEqual(["color", "count", "safety"]);
    expect(answer.answers.count).toEqual({ type: "noul", noul: expect.any(Number) });
    expect(answer.answers.color.type).toBe("choice");
    expect(["red", "white", "striped"]).toContain(answer.answers.color.choice);
    expect(answer.answers.safety.type).toBe("score");
    expect(answer.answers.safety.score).toBeGreaterThanOrEqual(0);
    expect(answer.answers.safety.score).toBeLessThanOrEqual(1);
    expect(answer.usage).toEqual({
      input_tokens: expect.any(Number),
      output_tokens: expect.any(Number),
      // What the answer cost: the settled price and its transaction.
      cost: atomicToDecimal(price, 6),
      cost_details: { network: "eip155:137", transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) },
    });
    expect(response.headers.get("x-paysvc-cost")).toBe(atomicToDecimal(price, 6));

    const after = await balances(payer().address);
    expect(before.payer - after.payer).toBe(price);
    expect(after.payTo - before.payTo).toBe(price);
  });

  for (const fault of ["http-error", "bad-shape"]) {
    it(`an upstream ${fault} is a 502 and nothing is settled`, async () => {
      const before = await balances(payer().address);
      const { response, signature } = await paidPost(decision(`[paysvc-dev-fault:${fault}]`));
      expect(response.status).toBe(502);
      expect(await balances(payer().address)).toEqual(before);
      expect(ledgerRow(signature)).toMatchObject({ status: "not_charged" });
    });
  }
});

describe("invalid decision requests get a 400 and no 402", () => {
  async function expectBadRequest(body: unknown, param: string | null) {
    const response = await postJson(PATH, body);
    const json = await response.json();
    expect(response.status, JSON.stringify(json)).toBe(400);
    expect(response.headers.get("payment-required")).toBeNull();
    expect(json.error.param).toBe(param);
    return json.error.message as string;
  }

  it("refuses a state over the input limit before its 402, having counted little past the limit", async () => {
    const response = await postJson(PATH, decision("harbor ".repeat(3_000_000)));
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as { error: { code: string; param: string; message: string } };
    expect(error).toMatchObject({ code: "context_length_exceeded", param: "state" });
    expect(error.message).toMatch(/^The decision counts more than \d+ input tokens; the limit is \d+$/);
  });

  it("refuses chat and Responses shapes, saying where they belong", async () => {
    expect(
      await expectBadRequest({ model: "jev-latest", messages: [{ role: "user", content: "x" }] }, "messages"),
    ).toMatch(/chat/);
    expect(await expectBadRequest({ model: "jev-latest", input: "x" }, "input")).toMatch(/Responses/);
  });

  it("names the bad field", async () => {
    const good = decision("state");
    await expectBadRequest({ ...good, model: "gpt-4o" }, "model");
    await expectBadRequest({ ...good, model: undefined }, "model");
    await expectBadRequest({ ...good, state: "" }, "state");
    await expectBadRequest({ ...good, state: 5 }, "state");
    await expectBadRequest({ ...good, questions: {} }, "questions");
    await expectBadRequest({ ...good, questions: [] }, "questions");
    await expectBadRequest({ ...good, questions: { q: { type: "essay", instructions: "x" } } }, "questions.q.type");
    await expectBadRequest({ ...good, questions: { q: { type: "noul" } } }, "questions.q.instructions");
    const many = Object.fromEntries(
      Array.from({ length: 33 }, (_, index) => [`q${index}`, { type: "noul", instructions: "x" }]),
    );
    expect(await expectBadRequest({ ...good, questions: many }, "questions")).toMatch(/at most 32/);
    // JSON.parse makes `__proto__` an own key, sent as such; it must not vanish from the questions.
    const named = JSON.parse(
      '{"__proto__": {"type": "noul", "instructions": "x"}, "a": {"type": "noul", "instructions": "y"}}',
    );
    await expectBadRequest({ ...good, questions: named }, "questions.__proto__");
    const spaced = { ...good, questions: { "is eligible?": { type: "noul", instructions: "x" } } };
    expect(await expectBadRequest(spaced, "questions.is eligible?")).toMatch(/question names are 1 to 64 letters/);
    expect(await expectBadRequest({ ...good, questions: "q" }, "questions")).toMatch(/object of named questions/);
  });
});

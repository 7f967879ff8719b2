import {
  createSIWxClientExtension,
  createSIWxPayload,
  encodeSIWxHeader,
  type SIWxExtensionInfo,
  type SupportedChain,
} from "@x402/extensions/sign-in-with-x";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import OpenAI from "openai";
import { privateKeyToAccount } from "viem/accounts";
import { beforeAll, describe, expect, it } from "vitest";
import { fundedPayer } from "./support/funded-payer";
import { buyPrepaidCode, paymentClient, quote, stack, usdcBalance, type PrepaidCode } from "./support/payments";
import { paysvc } from "./support/run-paysvc";

const KEYS_URL = () => `${stack().appUrl}/v1/prepaid/keys`;

/** An x402 client that signs in with `privateKey` when a 402 carries a sign-in challenge (the official extension). */
function signedInFetch(privateKey: `0x${string}`) {
  const client = new x402Client().registerExtension(
    createSIWxClientExtension({ signers: [privateKeyToAccount(privateKey)] }),
  );
  return wrapFetchWithPayment(fetch, client);
}

async function listKeys(privateKey: `0x${string}`) {
  const response = await signedInFetch(privateKey)(KEYS_URL());
  return { status: response.status, body: await response.json() };
}

async function change(privateKey: `0x${string}`, action: string, body: unknown) {
  const response = await signedInFetch(privateKey)(`${KEYS_URL()}/${action}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

async function keyStatus(code: string) {
  const response = await fetch(`${stack().appUrl}/v1/prepaid/status`, { headers: { authorization: `Bearer ${code}` } });
  return { status: response.status, body: await response.json() };
}

/** The challenge of an unsigned request, as the client reads it. */
async function challengeOf(url = KEYS_URL()) {
  const response = await fetch(url, { method: url === KEYS_URL() ? "GET" : "POST" });
  expect(response.status).toBe(402);
  const required = decodePaymentRequiredHeader(response.headers.get("payment-required")!);
  const extension = required.extensions!["sign-in-with-x"] as {
    info: SIWxExtensionInfo;
    supportedChains: SupportedChain[];
  };
  return { required, extension, body: await response.json() };
}

/** A SIGN-IN-WITH-X header for the challenge, changed by `alter` before it is signed. */
async function signedHeader(
  privateKey: `0x${string}`,
  alter: (info: SIWxExtensionInfo & SupportedChain) => void = () => {},
  url = KEYS_URL(),
) {
  const { extension } = await challengeOf(url);
  const info = { ...extension.info, ...extension.supportedChains[0]! };
  alter(info);
  // The client signs only a challenge whose domain is the host that sent it: as a phishing page's would be.
  const sentFrom = new URL(new URL(info.uri).pathname, `http://${info.domain}`).toString();
  const payload = await createSIWxPayload(info, privateKeyToAccount(privateKey), sentFrom);
  return encodeSIWxHeader(payload);
}

const withHeader = (header: string) => fetch(KEYS_URL(), { headers: { "sign-in-with-x": header } });

describe("wallets own the keys they paid for", () => {
  let owner: Awaited<ReturnType<typeof fundedPayer>>;
  let other: Awaited<ReturnType<typeof fundedPayer>>;
  let first: PrepaidCode;
  let second: PrepaidCode;
  let others: PrepaidCode;
  let rotatedCode: string | undefined;
  const currentCode = async () => rotatedCode ?? first.code;

  beforeAll(async () => {
    owner = await fundedPayer(1_000_000n);
    other = await fundedPayer(40_000n);
    first = await buyPrepaidCode(owner.key, { model: "vendor-a/gpt-6-luna", tokens: 100_000 });
    second = await buyPrepaidCode(owner.key, { model: "vendor-a/gpt-6-luna", tokens: 200_000 });
    others = await buyPrepaidCode(other.key, { model: "vendor-a/gpt-6-luna", tokens: 100_000 });
  });

  it("answers an unsigned request 402 with a sign-in challenge bound to this origin and network, nothing to pay", async () => {
    const { required, extension, body } = await challengeOf();
    expect(required.accepts).toEqual([]);
    expect(extension.info).toMatchObject({
      domain: new URL(stack().appUrl).host,
      uri: KEYS_URL(),
      version: "1",
      nonce: expect.stringMatching(/^[0-9a-f]{48}$/),
    });
    expect(Date.parse(extension.info.expirationTime!) - Date.parse(extension.info.issuedAt)).toBe(300_000);
    expect(extension.supportedChains).toEqual([{ chainId: "eip155:137", type: "eip191" }]);
    expect(body.error.code).toBe("sign_in_required");
  });

  it("lists exactly the signed-in wallet's keys, never their codes", async () => {
    const mine = await listKeys(owner.key);
    expect(mine.status).toBe(200);
    expect(mine.body.owner).toBe(owner.address.toLowerCase());
    expect(mine.body.data.map((key: { id: number }) => key.id)).toEqual([second.id, first.id]);
    expect(mine.body.data[1]).toEqual({
      object: "prepaid_key",
      id: first.id,
      code_prefix: first.code.slice(0, 16),
      model: "vendor-a/gpt-6-luna",
      status: "active",
      tokens: { total: 100_000, used: 0, reserved: 0, remaining: 100_000 },
      limits: { requests_per_minute: 600, tokens_per_minute: null, concurrent: 32 },
      created_at: expect.any(Number),
      last_used_at: null,
    });
    expect(JSON.stringify(mine.body)).not.toContain(first.code);
    const theirs = await listKeys(other.key);
    expect(theirs.body.data.map((key: { id: number }) => key.id)).toEqual([others.id]);
  });

  it("rotates a key: the old code is refused at once, the new one spends the same balance", async () => {
    const openai = new OpenAI({ apiKey: first.code, baseURL: first.api_base, maxRetries: 0 });
    await openai.chat.completions.create({
      model: "vendor-a/gpt-6-luna",
      messages: [{ role: "user", content: "before the rotation" }],
      max_tokens: 16,
    });
    const before = (await keyStatus(first.code)).body.tokens.remaining;
    expect(before).toBeLessThan(100_000);

    const rotated = await change(owner.key, "rotate", { key: first.id });
    expect(rotated.status).toBe(200);
    rotatedCode = rotated.body.code;
    expect(rotated.body.code).toMatch(/^paysvc_pk_[A-Za-z0-9_-]{43}$/);
    expect(rotated.body.code).not.toBe(first.code);
    expect(rotated.body).toMatchObject({ id: first.id, status: "active", code_prefix: rotated.body.code.slice(0, 16) });
    expect(rotated.body.last_used_at).toEqual(expect.any(Number));

    expect((await keyStatus(first.code)).status).toBe(401);
    const stale = new OpenAI({ apiKey: first.code, baseURL: first.api_base, maxRetries: 0 });
    await expect(
      stale.chat.completions.create({ model: "vendor-a/gpt-6-luna", messages: [{ role: "user", content: "x" }] }),
    ).rejects.toMatchObject({ status: 401 });

    expect((await keyStatus(rotated.body.code)).body.tokens.remaining).toBe(before);
    const fresh = new OpenAI({ apiKey: rotated.body.code, baseURL: first.api_base, maxRetries: 0 });
    await fresh.chat.completions.create({
      model: "vendor-a/gpt-6-luna",
      messages: [{ role: "user", content: "after the rotation" }],
      max_tokens: 16,
    });
    expect((await keyStatus(rotated.body.code)).body.tokens.remaining).toBeLessThan(before);
  });

  it("tops a key up, paid by its owner: its total grows by exactly what was paid for, and the chain agrees", async () => {
    const topUp = { key: first.id, model: "vendor-a/gpt-6-luna", tokens: 200_000 };
    const required = await quote("/prepaid/codes/top-up", topUp);
    const price = BigInt(required.accepts[0]!.amount);
    expect(price).toBe(
      BigInt((await quote("/prepaid/codes", { model: topUp.model, tokens: 200_000 })).accepts[0]!.amount),
    );
    const before = (await keyStatus((await currentCode())!)).body.tokens;
    const paidBefore = await usdcBalance(owner.address);
    const pay = wrapFetchWithPayment(fetch, paymentClient(owner.key));
    const answer = await pay(`${stack().appUrl}/prepaid/codes/top-up`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(topUp),
    });
    expect(answer.status).toBe(200);
    const body = await answer.json();
    expect(body).toMatchObject({ id: first.id, added_tokens: 200_000, tokens: { total: before.total + 200_000 } });
    expect(paidBefore - (await usdcBalance(owner.address))).toBe(price);
    const after = (await keyStatus((await currentCode())!)).body.tokens;
    expect(after.total).toBe(before.total + 200_000);
    expect(after.remaining).toBe(before.remaining + 200_000);

    // Another wallet paying for the owner's key, or the wrong model: refused before anything is taken.
    const stranger = wrapFetchWithPayment(fetch, paymentClient(other.key));
    const otherBefore = await usdcBalance(other.address);
    const refused = await stranger(`${stack().appUrl}/prepaid/codes/top-up`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(topUp),
    });
    expect(refused.status).toBe(404);
    const wrongModel = await pay(`${stack().appUrl}/prepaid/codes/top-up`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...topUp, model: "vendor-a/gpt-6-sol" }),
    });
    expect(wrongModel.status).toBe(400);
    expect(await usdcBalance(other.address)).toBe(otherBefore);
    expect((await keyStatus((await currentCode())!)).body.tokens.total).toBe(after.total);
  });

  it("lowers a key's limits, and never raises them", async () => {
    const lowered = await change(owner.key, "limits", { key: second.id, limits: { requests_per_minute: 5 } });
    expect(lowered.status).toBe(200);
    expect(lowered.body.limits).toEqual({ requests_per_minute: 5, tokens_per_minute: null, concurrent: 32 });
    const raised = await change(owner.key, "limits", { key: second.id, limits: { requests_per_minute: 500 } });
    expect(raised.body.limits.requests_per_minute).toBe(5);
    expect((await keyStatus(second.code)).body.limits.requests_per_minute).toBe(5);
    const bad = await change(owner.key, "limits", { key: second.id, limits: { requests_per_minute: -1 } });
    expect(bad.status).toBe(400);
  });

  it("does not let another wallet see or change a key", async () => {
    for (const action of ["rotate", "revoke"]) {
      const refused = await change(other.key, action, { key: second.id });
      expect(refused).toMatchObject({ status: 404, body: { error: { code: "not_found" } } });
    }
    expect((await keyStatus(second.code)).body.valid).toBe(true);
  });

  it("revokes a key: its code is refused, its tokens stay on record", async () => {
    const revoked = await change(owner.key, "revoke", { key: second.id });
    expect(revoked).toMatchObject({ status: 200, body: { id: second.id, status: "revoked" } });
    expect(revoked.body.tokens.remaining).toBe(200_000);
    expect((await keyStatus(second.code)).status).toBe(401);
    expect((await change(owner.key, "revoke", { key: second.id })).status).toBe(404);
    expect((await change(owner.key, "rotate", { key: second.id })).status).toBe(404);
    const listed = (await listKeys(owner.key)).body.data;
    expect(listed.find((key: { id: number }) => key.id === second.id).status).toBe("revoked");
  });

  it("refuses a replayed, another origin's, an expired, another chain's or a made-up message: 401 naming why", async () => {
    const header = await signedHeader(owner.key);
    expect((await withHeader(header)).status).toBe(200);
    const replayed = await withHeader(header);
    expect(replayed.status).toBe(401);
    expect((await replayed.json()).error.message).toMatch(/used before/);

    const cases: [string, (info: SIWxExtensionInfo & SupportedChain) => void, RegExp][] = [
      [
        "another origin (a phishing page's challenge)",
        (info) => Object.assign(info, { domain: "evil.example", uri: "http://evil.example/v1/prepaid/keys" }),
        /Domain mismatch/i,
      ],
      ["expired", (info) => void (info.expirationTime = new Date(Date.now() - 1000).toISOString()), /expired/i],
      ["another chain", (info) => void (info.chainId = "eip155:1"), /chain eip155:1/],
      ["a made-up nonce", (info) => void (info.nonce = "a".repeat(48)), /not of a challenge issued here/],
      ["another endpoint's", (info) => void (info.uri = `${KEYS_URL()}/revoke`), /is for \/v1\/prepaid\/keys\/revoke/],
    ];
    for (const [, alter, why] of cases) {
      const refused = await withHeader(await signedHeader(owner.key, alter));
      expect(refused.status).toBe(401);
      const body = await refused.json();
      expect(body.error).toMatchObject({ code: "invalid_sign_in", message: expect.stringMatching(why) });
      expect(JSON.stringify(body)).not.toContain("prepaid_key");
    }
    expect((await withHeader("not base64 json")).status).toBe(401);
  });

  it("gives a wallet that signed once a browser session, used from this site's pages only", async () => {
    const signIn = await fetch(`${KEYS_URL()}/sign-in`, {
      method: "POST",
      headers: { "sign-in-with-x": await signedHeader(owner.key, undefined, `${KEYS_URL()}/sign-in`) },
    });
    expect(signIn.status).toBe(200);
    expect(await signIn.json()).toMatchObject({ object: "wallet_session", owner: owner.address.toLowerCase() });
    const setCookie = signIn.headers.get("set-cookie")!;
    expect(setCookie).toMatch(
      /^paysvc_wallet=0x[0-9a-f]{40}\.\d+\.\d+\.[\w-]{43}; Path=\/v1\/prepaid\/keys; Max-Age=3600; HttpOnly; SameSite=Strict$/,
    );
    const cookie = setCookie.split(";")[0]!;
    const listed = await fetch(KEYS_URL(), { headers: { cookie } });
    expect((await listed.json()).data.map((key: { id: number }) => key.id)).toContain(first.id);
    // Another site's page cannot use it, and an altered cookie is no session.
    const origin = new URL(stack().appUrl).origin;
    const elsewhere = await fetch(`${KEYS_URL()}/rotate`, {
      method: "POST",
      headers: { cookie, origin: "https://evil.example", "content-type": "application/json" },
      body: JSON.stringify({ key: first.id }),
    });
    expect(elsewhere.status).toBe(401);
    const forged = cookie.replace(/0x[0-9a-f]{40}/, other.address.toLowerCase());
    expect((await fetch(KEYS_URL(), { headers: { cookie: forged } })).status).toBe(402);
    const here = await fetch(`${KEYS_URL()}/limits`, {
      method: "POST",
      headers: { cookie, origin, "content-type": "application/json" },
      body: JSON.stringify({ key: first.id, limits: { concurrent: 8 } }),
    });
    expect(here.status).toBe(200);
    const signOut = await fetch(`${KEYS_URL()}/sign-out`, { method: "POST", headers: { cookie, origin } });
    expect(signOut.headers.get("set-cookie")).toMatch(/^paysvc_wallet=; Path=\/v1\/prepaid\/keys; Max-Age=0/);
    // Signing out ends the wallet's sessions on every instance and in every browser: a copy of the cookie is no
    // session either.
    expect((await fetch(KEYS_URL(), { headers: { cookie } })).status).toBe(402);
    // A session is not a signed message: signing in again takes a new signature.
    expect((await fetch(`${KEYS_URL()}/sign-in`, { method: "POST", headers: { cookie } })).status).toBe(402);
  });

  it("lets the operator list and revoke keys with paysvc keys", async () => {
    const env = { DATABASE_URL: `file:${stack().databasePath}` };
    const listed = await paysvc(["keys", "list", "--owner", other.address, "--json"], 60_000, env);
    expect(JSON.parse(listed.stdout).map((key: { id: number }) => key.id)).toEqual([others.id]);
    const shown = await paysvc(["keys", "show", others.code.slice(0, 14)], 60_000, env);
    expect(shown.stdout).toContain(others.code.slice(0, 16));
    expect((await keyStatus(others.code)).status).toBe(200);
    expect((await paysvc(["keys", "revoke", String(others.id)], 60_000, env)).code).toBe(0);
    expect((await keyStatus(others.code)).status).toBe(401);
  });
});

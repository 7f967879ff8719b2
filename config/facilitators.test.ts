import { generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { problemsOf } from "./__fixtures__/problems-of";
import { cdpKeySecret, describeFacilitator, facilitatorsVariable, loadFacilitators } from "./facilitators";

const ed25519 = () => {
  const jwk = generateKeyPairSync("ed25519").privateKey.export({ format: "jwk" });
  return Buffer.concat([Buffer.from(jwk.d!, "base64url"), Buffer.from(jwk.x!, "base64url")]).toString("base64");
};
const es256 = (type: "sec1" | "pkcs8") =>
  generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ format: "pem", type }).toString();
const CDP = "https://api.cdp.coinbase.com/platform/v2/x402";

describe("the facilitators of a deployment", () => {
  it("is FACILITATOR_URL alone, named facilitator, without credentials unless given", () => {
    expect(loadFacilitators({ FACILITATOR_URL: "https://x402.example/" })).toEqual([
      { name: "facilitator", url: "https://x402.example", builtIn: false, auth: { kind: "none" } },
    ]);
    expect(loadFacilitators({})).toEqual([]);
  });

  it("lists FACILITATORS in order, built-in among them, each with its own credentials", () => {
    const secret = ed25519();
    const keys = { CDP_API_KEY_ID: "organizations/o/apiKeys/k", CDP_API_KEY_SECRET: secret };
    const entries = loadFacilitators({
      FACILITATORS: `cdp=${CDP}, thirdweb=https://x402.thirdweb.example ,built-in`,
      ...keys,
      FACILITATOR_THIRDWEB_AUTH_HEADER: "x-secret-key: tw-secret",
    });
    expect(entries).toEqual([
      {
        name: "cdp",
        url: CDP,
        builtIn: false,
        auth: { kind: "cdp", apiKeyId: "organizations/o/apiKeys/k", apiKeySecret: secret },
      },
      {
        name: "thirdweb",
        url: "https://x402.thirdweb.example",
        builtIn: false,
        auth: { kind: "header", name: "x-secret-key", value: "tw-secret" },
      },
      { name: "built-in", url: undefined, builtIn: true, auth: { kind: "none" } },
    ]);
    // What is printed names the kind of credentials, never a secret; the app is handed every URL.
    expect(JSON.stringify(entries.map(describeFacilitator))).not.toMatch(/tw-secret|BEGIN|=/);
    expect(describeFacilitator(entries[1]!).auth).toBe("header x-secret-key");
    const running = entries.map((entry) => (entry.builtIn ? { ...entry, url: "http://127.0.0.1:4021" } : entry));
    expect(
      loadFacilitators({ ...keys, FACILITATORS: facilitatorsVariable(running) }).map((entry) => entry.url),
    ).toEqual([CDP, "https://x402.thirdweb.example", "http://127.0.0.1:4021"]);
  });

  it("takes CDP's keys at CDP's URL, or wherever FACILITATOR_<NAME>_AUTH=cdp says", () => {
    const keys = { CDP_API_KEY_ID: "id", CDP_API_KEY_SECRET: es256("sec1") };
    const [atCdp] = loadFacilitators({ FACILITATOR_URL: CDP, ...keys });
    expect(atCdp!.auth).toMatchObject({ kind: "cdp", apiKeyId: "id" });
    // An ES256 key as CDP downloads it (SEC1 PEM) is handed to the CDP SDK as PKCS8, which it requires.
    expect((atCdp!.auth as { apiKeySecret: string }).apiKeySecret).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    const [local] = loadFacilitators({
      FACILITATORS: "proxy=http://127.0.0.1:9",
      FACILITATOR_PROXY_AUTH: "cdp",
      ...keys,
    });
    expect(local!.auth.kind).toBe("cdp");
  });

  it("refuses what cannot work, one line per variable, never echoing a secret", () => {
    expect(problemsOf(() => loadFacilitators({ FACILITATOR_URL: CDP }))).toEqual([
      expect.stringMatching(/^CDP_API_KEY_ID: required: facilitator facilitator authenticates with a CDP API key/),
      expect.stringMatching(/^CDP_API_KEY_SECRET: required/),
    ]);
    const malformed = problemsOf(() =>
      loadFacilitators({ FACILITATOR_URL: CDP, CDP_API_KEY_ID: "id", CDP_API_KEY_SECRET: "c2VjcmV0LXZhbHVl" }),
    );
    expect(malformed).toEqual([expect.stringMatching(/^CDP_API_KEY_SECRET: not a CDP API key secret/)]);
    expect(malformed.join()).not.toContain("c2VjcmV0LXZhbHVl");
    expect(
      problemsOf(() => loadFacilitators({ FACILITATOR_URL: "https://x", FACILITATOR_AUTH_HEADER: "s3cr3t" })),
    ).toEqual([expect.stringMatching(/^FACILITATOR_AUTH_HEADER: must be one header as "Name: value"/)]);
    expect(
      problemsOf(() => loadFacilitators({ FACILITATOR_URL: "https://x", FACILITATOR_AUTH_HEADER: "Host: evil" })),
    ).toEqual([expect.stringMatching(/^FACILITATOR_AUTH_HEADER: Host is set by the HTTP client itself/)]);
    expect(problemsOf(() => loadFacilitators({ FACILITATORS: "a=https://a,a=https://b" }))).toEqual([
      expect.stringMatching(/^FACILITATORS: a is listed twice/),
    ]);
    expect(problemsOf(() => loadFacilitators({ FACILITATORS: "Bad Name=https://a,b" }))).toEqual([
      expect.stringMatching(/^FACILITATORS: "Bad Name" is not a facilitator name/),
      expect.stringMatching(/^FACILITATORS: b needs its URL/),
    ]);
    expect(problemsOf(() => loadFacilitators({ FACILITATORS: "a=ftp://a" }))).toEqual([
      "FACILITATORS (a): must be an http(s) URL such as https://x402.example.com",
    ]);
    expect(problemsOf(() => loadFacilitators({ FACILITATORS: "a=https://a", FACILITATOR_URL: "https://b" }))).toEqual([
      expect.stringMatching(/^FACILITATOR_URL: set FACILITATORS or FACILITATOR_URL, not both/),
    ]);
    expect(problemsOf(() => loadFacilitators({ FACILITATORS: "a=https://a", FACILITATOR_A_AUTH: "basic" }))).toEqual([
      expect.stringMatching(/^FACILITATOR_A_AUTH: must be cdp .* or none/),
    ]);
    expect(
      problemsOf(() => loadFacilitators({ FACILITATORS: "built-in", FACILITATOR_BUILT_IN_AUTH_HEADER: "a: b" })),
    ).toEqual(["FACILITATOR_BUILT_IN_AUTH_HEADER: the built-in facilitator takes no credentials"]);
    // Running, as `paysvc start` hands it to its app: with its URL and the secret it serves that app with.
    expect(
      loadFacilitators({
        FACILITATORS: "built-in=http://127.0.0.1:4020",
        FACILITATOR_BUILT_IN_AUTH_HEADER: "Authorization: Bearer 0123",
      }),
    ).toEqual([
      {
        name: "built-in",
        url: "http://127.0.0.1:4020",
        builtIn: true,
        auth: { kind: "header", name: "Authorization", value: "Bearer 0123" },
      },
    ]);
  });

  it("reads a CDP secret of either kind and nothing else", () => {
    expect(cdpKeySecret(ed25519())).toBeDefined();
    expect(cdpKeySecret(es256("pkcs8"))).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    expect(cdpKeySecret(es256("sec1").replaceAll("\n", "\\n"))).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    // Right length, halves that do not belong together; another curve; not a key at all.
    expect(cdpKeySecret(Buffer.alloc(64, 7).toString("base64"))).toBeUndefined();
    const p384 = generateKeyPairSync("ec", { namedCurve: "P-384" }).privateKey.export({ format: "pem", type: "sec1" });
    expect(cdpKeySecret(p384.toString())).toBeUndefined();
    expect(cdpKeySecret("-----BEGIN EC PRIVATE KEY-----\nnope\n-----END EC PRIVATE KEY-----")).toBeUndefined();
  });
});

import { describe, expect, it } from "vitest";
import { problemsOf } from "./__fixtures__/problems-of";
import { loadLaunchConfig } from "./dev-launch-config";
import { loadServiceConfig } from "./service-config";

const SOLANA = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";
const SOLANA_PAY_TO = "54R8Q24jSGPFUXDGczHzseftYug7EEKek53x1ATdYqjF";
const EVM_PAY_TO = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

const service = (overrides: Record<string, string>) => ({
  FACILITATOR_URL: "http://127.0.0.1:4020",
  UPSTREAM_BASE_URL: "http://127.0.0.1:4010/v1",
  ...overrides,
});

describe("PAYMENT_TIMEOUT_SECONDS and upto", () => {
  it("is at least a minute while upto is offered, since an upto payment needs that long left", () => {
    const short = service({ NETWORK: "eip155:8453", PAY_TO: EVM_PAY_TO, PAYMENT_TIMEOUT_SECONDS: "59" });
    expect(problemsOf(() => loadServiceConfig(short))).toEqual([
      expect.stringMatching(/^PAYMENT_TIMEOUT_SECONDS: at least 60 while X402_UPTO is on: .*set X402_UPTO=off$/),
    ]);
    expect(loadServiceConfig({ ...short, X402_UPTO: "off" }).paymentTimeoutSeconds).toBe(59);
    expect(loadServiceConfig({ ...short, PAYMENT_TIMEOUT_SECONDS: "60" }).upto).toBe(true);
    // Solana has no upto: nothing to refuse there.
    expect(loadServiceConfig({ ...short, NETWORK: SOLANA, PAY_TO: SOLANA_PAY_TO }).paymentTimeoutSeconds).toBe(59);
  });
});

describe("addresses are checked against the deployment's network", () => {
  it("takes a base58 pay-to on Solana and an EIP-55 one on EVM", () => {
    expect(loadServiceConfig(service({ NETWORK: SOLANA, PAY_TO: SOLANA_PAY_TO })).payTo).toBe(SOLANA_PAY_TO);
    expect(loadServiceConfig(service({ NETWORK: "eip155:8453", PAY_TO: EVM_PAY_TO })).payTo).toBe(EVM_PAY_TO);
  });

  it("refuses an address of the other kind, naming the network's format", () => {
    expect(problemsOf(() => loadServiceConfig(service({ NETWORK: SOLANA, PAY_TO: EVM_PAY_TO })))).toEqual([
      expect.stringMatching(/^PAY_TO: must be a Solana address on solana:5eykt.*base58/),
    ]);
    expect(problemsOf(() => loadServiceConfig(service({ NETWORK: "eip155:137", PAY_TO: SOLANA_PAY_TO })))).toEqual([
      expect.stringMatching(/^PAY_TO: must be an EVM address on eip155:137/),
    ]);
  });

  it("refuses a bad checksum, a truncated base58 address, and a USDC_ADDRESS on Solana", () => {
    const badChecksum = "0x70997970c51812dc3a010c7d01b50e0d17dc79C8";
    expect(problemsOf(() => loadServiceConfig(service({ NETWORK: "eip155:137", PAY_TO: badChecksum })))).toHaveLength(
      1,
    );
    expect(
      problemsOf(() => loadServiceConfig(service({ NETWORK: SOLANA, PAY_TO: SOLANA_PAY_TO.slice(0, 30) }))),
    ).toEqual([expect.stringMatching(/^PAY_TO: /)]);
    expect(
      problemsOf(() =>
        loadServiceConfig(service({ NETWORK: SOLANA, PAY_TO: SOLANA_PAY_TO, USDC_ADDRESS: SOLANA_PAY_TO })),
      ),
    ).toEqual([expect.stringMatching(/^USDC_ADDRESS: .*USDC mint EPjFWdd5/)]);
  });

  it("reports a malformed address even when the network itself is unknown", () => {
    const problems = problemsOf(() => loadLaunchConfig({ NETWORK: "eip155:1", PAY_TO: "0x1234" }));
    expect(problems).toEqual([
      expect.stringMatching(/^NETWORK: must be one of .*solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp/),
      expect.stringMatching(/^PAY_TO: must be an EVM address .* or a Solana address/),
    ]);
  });

  it("checks the facilitator key in the network's format", () => {
    const hexKey = `0x${"11".repeat(32)}`;
    expect(loadLaunchConfig({ NETWORK: "eip155:137", FACILITATOR_PRIVATE_KEY: hexKey }).configured).toMatchObject({
      facilitatorPrivateKey: hexKey,
    });
    expect(problemsOf(() => loadLaunchConfig({ NETWORK: SOLANA, FACILITATOR_PRIVATE_KEY: hexKey }))).toEqual([
      expect.stringMatching(/^FACILITATOR_PRIVATE_KEY: must be a 64-byte Solana keypair in base58/),
    ]);
  });
});

describe("the header trusted proxies write the client's address into", () => {
  const trusted = (overrides: Record<string, string>) =>
    loadServiceConfig(service({ PAY_TO: EVM_PAY_TO, TRUSTED_PROXIES: "10.0.0.0/8, 127.0.0.2", ...overrides }))
      .trustedProxies;

  it("is X-Forwarded-For unless Forwarded is chosen", () => {
    expect(trusted({})).toEqual({ addresses: ["10.0.0.0/8", "127.0.0.2"], header: "x-forwarded-for" });
    expect(trusted({ TRUSTED_PROXY_HEADER: " Forwarded " }).header).toBe("forwarded");
    expect(trusted({ TRUSTED_PROXY_HEADER: "X-Forwarded-For" }).header).toBe("x-forwarded-for");
  });

  it("is one header, never both or another", () => {
    for (const value of ["x-forwarded-for,forwarded", "x-real-ip"]) {
      expect(problemsOf(() => trusted({ TRUSTED_PROXY_HEADER: value }))).toEqual([
        expect.stringMatching(/^TRUSTED_PROXY_HEADER: must be x-forwarded-for or forwarded/),
      ]);
    }
  });
});

describe("the metrics token", () => {
  const token = (value?: string) =>
    loadServiceConfig(service({ PAY_TO: EVM_PAY_TO, ...(value === undefined ? {} : { METRICS_TOKEN: value }) }))
      .metricsToken;

  it("is absent unless set, and taken as given when long enough", () => {
    expect(token()).toBeUndefined();
    expect(token("")).toBeUndefined();
    expect(token(" 0123456789abcdef ")).toBe("0123456789abcdef");
  });

  it("is refused when short enough to guess or holding a space", () => {
    for (const value of ["short", "0123456789abcde", "0123456789 abcdef"]) {
      expect(problemsOf(() => token(value))).toEqual([
        expect.stringMatching(/^METRICS_TOKEN: must be at least 16 printable characters without spaces/),
      ]);
    }
  });
});

describe("the operator's token", () => {
  const token = (value?: string) =>
    loadServiceConfig(service({ PAY_TO: EVM_PAY_TO, ...(value === undefined ? {} : { OPERATOR_TOKEN: value }) }))
      .operatorToken;
  const long = "0123456789abcdef0123456789abcdef";

  it("is absent unless set (no operator's page), and taken as given when long enough", () => {
    expect(token()).toBeUndefined();
    expect(token("")).toBeUndefined();
    expect(token(` ${long} `)).toBe(long);
  });

  it("is refused in one line naming the variable, never showing the value, when short or holding a space", () => {
    for (const value of ["short-operator-token", long.slice(1), `${long.slice(0, 16)} ${long.slice(16)}`]) {
      const problems = problemsOf(() => token(value));
      expect(problems).toEqual([
        expect.stringMatching(/^OPERATOR_TOKEN: must be at least 32 printable characters without spaces/),
      ]);
      expect(problems[0]).not.toContain(value);
    }
  });
});

describe("the origins whose pages may read the API (CORS_ORIGINS)", () => {
  const origins = (value?: string) =>
    loadServiceConfig(service({ PAY_TO: EVM_PAY_TO, ...(value === undefined ? {} : { CORS_ORIGINS: value }) }))
      .corsOrigins;

  it("are any origin unless set", () => {
    expect(origins()).toBe("*");
    expect(origins(" ")).toBe("*");
    expect(origins(" * ")).toBe("*");
  });

  it("are a list of origins in the form browsers send them", () => {
    expect(origins("https://a.example, http://localhost:5173")).toEqual(["https://a.example", "http://localhost:5173"]);
    // Lower-cased host, default port dropped, repeats once: Origin headers are compared as sent.
    expect(origins("HTTPS://A.Example:443,https://a.example,http://[::1]:8080,")).toEqual([
      "https://a.example",
      "http://[::1]:8080",
    ]);
  });

  it("are refused when an entry is no origin, naming it", () => {
    for (const [value, named] of [
      ["https://a.example/app", "https://a.example/app"],
      ["https://a.example/", "https://a.example/"],
      ["a.example", "a.example"],
      ["ftp://a.example", "ftp://a.example"],
      ["https://user@a.example", "https://user@a.example"],
      ["https://a.example:99999", "https://a.example:99999"],
      ["*, https://a.example", "*"],
      ["http://localhost:5173, https://a.example?x=1", "https://a.example?x=1"],
    ]) {
      expect(
        problemsOf(() => origins(value)),
        value,
      ).toEqual([
        `CORS_ORIGINS: must be * or a comma-separated list of origins such as https://a.example, http://localhost:5173; ${JSON.stringify(named)} is not scheme://host[:port] (no path). Set it in the environment.`,
      ]);
    }
    expect(problemsOf(() => origins(" , "))).toEqual([expect.stringMatching(/^CORS_ORIGINS: must be \* or a/)]);
  });
});

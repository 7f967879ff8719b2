import { generateKeyPairSync } from "node:crypto";
import { generateJwt } from "@coinbase/cdp-sdk/auth";
import { cdpKeySecret } from "../../config/facilitators";
import { AuthenticatedFacilitatorClient } from "../../server/payment/facilitator-auth";
import { ms, percentile } from "./stats";

const CDP_URL = "https://api.cdp.coinbase.com/platform/v2/x402";

/** A CDP API key's secret of either kind, as CDP hands it out (Ed25519 in base64; ES256 as a SEC1 PEM). */
function cdpSecret(kind: "ed25519" | "es256"): string {
  if (kind === "es256") {
    const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    return cdpKeySecret(privateKey.export({ format: "pem", type: "sec1" }).toString())!;
  }
  const jwk = generateKeyPairSync("ed25519").privateKey.export({ format: "jwk" });
  return Buffer.concat([Buffer.from(jwk.d!, "base64url"), Buffer.from(jwk.x!, "base64url")]).toString("base64");
}

/** The median time of `run`, over `rounds` calls after a tenth as many to warm up. */
async function median(run: () => Promise<unknown>, rounds: number): Promise<number> {
  for (let index = 0; index < Math.max(5, rounds / 10); index++) await run();
  const durations: number[] = [];
  for (let index = 0; index < rounds; index++) {
    const begin = performance.now();
    await run();
    durations.push(performance.now() - begin);
  }
  return percentile(durations, 50);
}

/**
 * Section 11: what a CDP facilitator's credentials cost each call to it (a paid request makes two, verify and
 * settle): the JWT the CDP SDK signs for the operation asked, beside the baseline of the x402 client's
 * `createAuthHeaders` hook, which asks for all three operations' headers on every call.
 */
export async function facilitatorAuthSection(rounds: number): Promise<string[]> {
  const lines: string[] = [];
  for (const kind of ["ed25519", "es256"] as const) {
    const auth = {
      kind: "cdp" as const,
      apiKeyId: `organizations/bench/apiKeys/${kind}`,
      apiKeySecret: cdpSecret(kind),
    };
    const client = new AuthenticatedFacilitatorClient({ url: CDP_URL }, auth);
    const one = await median(() => client.headers("verify"), rounds);
    const three = await median(
      () =>
        Promise.all(
          ["verify", "settle", "supported"].map((path) =>
            generateJwt({ ...auth, requestMethod: "POST", requestHost: "api.cdp.coinbase.com", requestPath: path }),
          ),
        ),
      rounds,
    );
    lines.push(
      `${kind}: ${ms(one)} a facilitator call (one JWT), beside ${ms(three)} for the hook's three: ${(one / three).toFixed(2)}`,
    );
  }
  return lines;
}

import { generateKeyPairSync, randomUUID, verify, type KeyObject } from "node:crypto";

/**
 * A CDP API key made here, as the CDP portal hands it out: an id, and a secret that is an Ed25519 key in base64
 * (seed and public key, 64 bytes) or an ES256 key as a PEM EC private key; with the public half, to check tokens.
 */
export function cdpApiKey(kind: "ed25519" | "es256") {
  const id = `organizations/${randomUUID()}/apiKeys/${randomUUID()}`;
  if (kind === "es256") {
    const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    return { id, secret: privateKey.export({ format: "pem", type: "sec1" }).toString(), publicKey };
  }
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const jwk = privateKey.export({ format: "jwk" });
  const raw = Buffer.concat([Buffer.from(jwk.d!, "base64url"), Buffer.from(jwk.x!, "base64url")]);
  return { id, secret: raw.toString("base64"), publicKey };
}

/**
 * What is wrong with a request's CDP bearer token, as CDP's facilitator checks it; undefined when it is good: signed
 * by the key's private half (EdDSA or ES256), naming the key in `kid` and `sub`, issued by `cdp`, valid now and for
 * at most a few minutes, and naming this request's method, host and path in its `uris` claim.
 */
export function cdpTokenProblem(
  authorization: string | undefined,
  key: { id: string; publicKey: KeyObject },
  request: { method: string; host: string; path: string },
): string | undefined {
  const token = /^Bearer (.+)$/.exec(authorization ?? "")?.[1];
  if (!token) return "no bearer token";
  const [headerPart, claimsPart, signaturePart] = token.split(".");
  if (!headerPart || !claimsPart || !signaturePart) return "not a JWT";
  const header = JSON.parse(Buffer.from(headerPart, "base64url").toString()) as { alg?: string; kid?: string };
  const claims = JSON.parse(Buffer.from(claimsPart, "base64url").toString()) as Record<string, unknown>;
  const signed = Buffer.from(`${headerPart}.${claimsPart}`);
  const signature = Buffer.from(signaturePart, "base64url");
  if (header.kid !== key.id || claims.sub !== key.id) return "another key's token";
  const expected = key.publicKey.asymmetricKeyType === "ec" ? "ES256" : "EdDSA";
  if (header.alg !== expected) return `alg ${header.alg}, where the key is ${expected}`;
  const algorithm = expected === "ES256" ? "sha256" : null;
  const good = verify(algorithm, signed, { key: key.publicKey, dsaEncoding: "ieee-p1363" }, signature);
  if (!good) return "bad signature";
  if (claims.iss !== "cdp") return "not issued by cdp";
  const now = Math.floor(Date.now() / 1000);
  const expires = Number(claims.exp);
  if (!(expires > now && expires - now <= 300)) return `expiry ${expires - now} s away`;
  if (Number(claims.nbf) > now + 5) return "not valid yet";
  const uri = `${request.method} ${request.host}${request.path}`;
  if (!(claims.uris as string[] | undefined)?.includes(uri)) return `token is not for ${uri}`;
  return undefined;
}

import { createPrivateKey, createPublicKey } from "node:crypto";
import { ConfigurationError, type Environment } from "./configuration-error";
import { insecureUrlProblem, redactedUrl } from "./host-urls";

/**
 * The facilitators that verify and settle payments, in the order they are tried, and the credentials each sends.
 * Read from FACILITATORS (an ordered list) or FACILITATOR_URL (one); the credentials of an entry from variables
 * named after it. Secrets are kept here and in the auth headers built from them, never printed.
 */

/** How a facilitator is authenticated: not at all, a CDP API key's JWT per request, or a fixed header. */
export type FacilitatorAuth =
  | { kind: "none" }
  | { kind: "cdp"; apiKeyId: string; apiKeySecret: string }
  | { kind: "header"; name: string; value: string };

export interface FacilitatorEntry {
  /** How the ledger, /health, /metrics and the CLI name it. */
  name: string;
  /** Undefined for the built-in facilitator until `paysvc start` has started it. */
  url: string | undefined;
  /** The built-in facilitator (CHAIN_RPC_URL + FACILITATOR_PRIVATE_KEY), run by `paysvc start`. */
  builtIn: boolean;
  auth: FacilitatorAuth;
}

/** The entry named by FACILITATOR_URL alone, and the built-in facilitator's name. */
export const SINGLE_FACILITATOR = "facilitator";
export const BUILT_IN_FACILITATOR = "built-in";
/** CDP's facilitator: entries at this host authenticate with the CDP API key unless told otherwise. */
export const CDP_FACILITATOR_HOST = "api.cdp.coinbase.com";

const NAME = /^[a-z][a-z0-9-]{0,31}$/;
// RFC 9110 token characters; the value: visible characters and spaces, no line breaks.
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const HEADER_VALUE = /^[\x20-\x7e\t]+$/;
const RESERVED_HEADERS = new Set(["host", "content-length", "content-type", "transfer-encoding", "connection"]);

/** The variables of an entry's credentials: FACILITATOR_<NAME>_AUTH[_HEADER], or FACILITATOR_AUTH[_HEADER] alone. */
export function credentialVariables(name: string, single: boolean) {
  const prefix = single ? "FACILITATOR_" : `FACILITATOR_${name.toUpperCase().replaceAll("-", "_")}_`;
  return { auth: `${prefix}AUTH`, header: `${prefix}AUTH_HEADER` };
}

/**
 * The ordered facilitators. FACILITATORS: comma-separated `name=url` entries, and `built-in` for the facilitator
 * `paysvc start` runs on CHAIN_RPC_URL with FACILITATOR_PRIVATE_KEY; or FACILITATOR_URL, one entry named
 * `facilitator`; or, with neither, the built-in one alone where CHAIN_RPC_URL and FACILITATOR_PRIVATE_KEY are set.
 * Returns [] when nothing names a facilitator (the caller says what is required). One line per problem.
 */
export function loadFacilitators(env: Environment): FacilitatorEntry[] {
  const value = (name: string) => {
    const raw = env[name]?.trim();
    return raw ? raw : undefined;
  };
  const problems: string[] = [];
  const list = value("FACILITATORS");
  const single = value("FACILITATOR_URL");
  if (list && single) {
    throw new ConfigurationError([
      "FACILITATOR_URL: set FACILITATORS or FACILITATOR_URL, not both (FACILITATORS=name=url,... lists every facilitator in order)",
    ]);
  }
  let entries: { name: string; url: string | undefined; builtIn: boolean }[];
  if (list) entries = parseList(list, problems);
  else if (single)
    entries = [{ name: SINGLE_FACILITATOR, url: urlOf("FACILITATOR_URL", single, problems), builtIn: false }];
  else if (value("CHAIN_RPC_URL") && value("FACILITATOR_PRIVATE_KEY")) {
    entries = [{ name: BUILT_IN_FACILITATOR, url: undefined, builtIn: true }];
  } else entries = [];
  const result = entries.map((entry) => ({
    ...entry,
    auth: authOf(entry, !list, value, problems),
  }));
  if (problems.length > 0) throw new ConfigurationError(problems);
  return result;
}

function parseList(list: string, problems: string[]) {
  const entries: { name: string; url: string | undefined; builtIn: boolean }[] = [];
  for (const item of list.split(",").map((part) => part.trim())) {
    if (item === "") continue;
    const equals = item.indexOf("=");
    const name = (equals < 0 ? item : item.slice(0, equals)).trim();
    const url = equals < 0 ? undefined : item.slice(equals + 1).trim();
    if (!NAME.test(name)) {
      problems.push(
        `FACILITATORS: "${name}" is not a facilitator name: lowercase letters, digits and -, starting with a letter, at most 32 (such as cdp=https://api.cdp.coinbase.com/platform/v2/x402,built-in)`,
      );
      continue;
    }
    if (entries.some((entry) => entry.name === name)) {
      problems.push(`FACILITATORS: ${name} is listed twice; each facilitator once, in the order to try them`);
      continue;
    }
    const builtIn = name === BUILT_IN_FACILITATOR;
    if (!builtIn && url === undefined) {
      problems.push(`FACILITATORS: ${name} needs its URL (${name}=https://...); only built-in stands alone`);
      continue;
    }
    // `built-in=url` is the running built-in facilitator, as `paysvc start` hands it to the app.
    entries.push({
      name,
      url: url === undefined ? undefined : urlOf(`FACILITATORS (${name})`, url, problems),
      builtIn,
    });
  }
  if (entries.length === 0 && problems.length === 0) {
    problems.push("FACILITATORS: lists no facilitator; name=url entries, comma-separated, in the order to try them");
  }
  return entries;
}

function urlOf(variable: string, value: string, problems: string[]): string | undefined {
  try {
    const url = new URL(value);
    if (url.protocol === "http:" || url.protocol === "https:") {
      const insecure = insecureUrlProblem(value);
      if (!insecure) return value.replace(/\/+$/, "");
      problems.push(`${variable}: ${insecure}`);
      return undefined;
    }
  } catch {
    // reported below
  }
  problems.push(`${variable}: must be an http(s) URL such as https://x402.example.com`);
  return undefined;
}

function authOf(
  entry: { name: string; url: string | undefined; builtIn: boolean },
  single: boolean,
  value: (name: string) => string | undefined,
  problems: string[],
): FacilitatorAuth {
  const variables = credentialVariables(entry.name, single);
  const kind = value(variables.auth)?.toLowerCase();
  const header = value(variables.header);
  // The built-in facilitator's credentials are a secret `paysvc start` makes and hands its app with the running
  // facilitator's URL (built-in=url); the operator names it without a URL, and gives it none.
  if (entry.builtIn && entry.url === undefined) {
    if (kind || header)
      problems.push(`${kind ? variables.auth : variables.header}: the built-in facilitator takes no credentials`);
    return { kind: "none" };
  }
  if (kind && header) {
    problems.push(`${variables.header}: set ${variables.auth} or ${variables.header} for ${entry.name}, not both`);
    return { kind: "none" };
  }
  if (header) return headerAuth(variables.header, header, problems);
  const cdpHost = entry.url !== undefined && new URL(entry.url).host === CDP_FACILITATOR_HOST;
  if (kind === "cdp" || (kind === undefined && cdpHost)) return cdpAuth(entry.name, variables.auth, value, problems);
  if (kind !== undefined && kind !== "none") {
    problems.push(`${variables.auth}: must be cdp (a JWT signed with CDP_API_KEY_ID / CDP_API_KEY_SECRET) or none`);
  }
  return { kind: "none" };
}

function headerAuth(variable: string, text: string, problems: string[]): FacilitatorAuth {
  const colon = text.indexOf(":");
  const name = colon < 0 ? "" : text.slice(0, colon).trim();
  const headerValue = colon < 0 ? "" : text.slice(colon + 1).trim();
  if (!HEADER_NAME.test(name) || !HEADER_VALUE.test(headerValue)) {
    problems.push(`${variable}: must be one header as "Name: value", such as "x-secret-key: <your key>", on one line`);
    return { kind: "none" };
  }
  if (RESERVED_HEADERS.has(name.toLowerCase())) {
    problems.push(`${variable}: ${name} is set by the HTTP client itself; name the facilitator's credential header`);
    return { kind: "none" };
  }
  return { kind: "header", name, value: headerValue };
}

function cdpAuth(
  entry: string,
  selector: string,
  value: (name: string) => string | undefined,
  problems: string[],
): FacilitatorAuth {
  const apiKeyId = value("CDP_API_KEY_ID");
  const secret = value("CDP_API_KEY_SECRET");
  const why = `facilitator ${entry} authenticates with a CDP API key (${selector}=cdp, or CDP's URL)`;
  if (!apiKeyId) problems.push(`CDP_API_KEY_ID: required: ${why}; the key's id from the CDP portal`);
  if (!secret) problems.push(`CDP_API_KEY_SECRET: required: ${why}; the key's secret from the CDP portal`);
  if (!apiKeyId || !secret) return { kind: "none" };
  const apiKeySecret = cdpKeySecret(secret);
  if (!apiKeySecret) {
    problems.push(
      "CDP_API_KEY_SECRET: not a CDP API key secret: expected an Ed25519 key in base64 (64 bytes) or an ES256 key as a PEM EC private key",
    );
    return { kind: "none" };
  }
  return { kind: "cdp", apiKeyId, apiKeySecret };
}

/**
 * The secret as the CDP SDK signs with it: an Ed25519 key (base64 of seed and public key, whose halves must
 * agree) as given, or a P-256 EC key in PEM (SEC1, as CDP downloads it, or PKCS8) as PKCS8, which the SDK
 * requires. Escaped line breaks (`\n` in an env file) are read as line breaks. Undefined when it is neither.
 */
export function cdpKeySecret(secret: string): string | undefined {
  const text = secret.replaceAll("\\n", "\n").trim();
  if (text.startsWith("-----BEGIN")) {
    try {
      const key = createPrivateKey(text);
      if (key.asymmetricKeyType !== "ec" || key.asymmetricKeyDetails?.namedCurve !== "prime256v1") return undefined;
      return key.export({ format: "pem", type: "pkcs8" }).toString();
    } catch {
      return undefined;
    }
  }
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text)) return undefined;
  const bytes = Buffer.from(text, "base64");
  if (bytes.length !== 64) return undefined;
  try {
    const der = Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), bytes.subarray(0, 32)]);
    const publicKey = createPublicKey(createPrivateKey({ key: der, format: "der", type: "pkcs8" }));
    const raw = publicKey.export({ format: "der", type: "spki" }).subarray(-32);
    return raw.equals(bytes.subarray(32)) ? text : undefined;
  } catch {
    return undefined;
  }
}

/** What is said of an entry where it is printed: its name, URL and the kind of credentials, never their values. */
export function describeFacilitator(entry: FacilitatorEntry): { name: string; url: string; auth: string } {
  const auth =
    entry.auth.kind === "cdp"
      ? `CDP API key ${entry.auth.apiKeyId.split("/").at(-1)!.slice(0, 8)}… (JWT)`
      : entry.auth.kind === "header"
        ? `header ${entry.auth.name}`
        : "none";
  return {
    name: entry.name,
    url: entry.url ? redactedUrl(entry.url) : "started by paysvc start on CHAIN_RPC_URL",
    auth,
  };
}

/** FACILITATORS as `paysvc start` hands it to the app: every entry with its URL (the built-in one's once running). */
export function facilitatorsVariable(entries: readonly FacilitatorEntry[]): string {
  return entries.map((entry) => `${entry.name}=${entry.url}`).join(",");
}

import type { PaymentRequired } from "@x402/core/types";

/**
 * The last members of a document's extensions that are the same objects in every quote of a path (`payment-identifier`,
 * `bazaar`, the path's input schema and two thirds of a document, a scheme's declaration such as
 * `eip2612GasSponsoring`): their JSON written once, and its base64 (see base64Json) once per alignment.
 */
export interface SharedExtensions {
  readonly names: readonly string[];
  readonly values: readonly object[];
  /** `"name":value` members, comma-separated. */
  readonly json: string;
  /** The UTF-8 of `json` + `}}` (the end of a document), and its base64 less its first 0, 1 or 2 bytes. */
  encoded?: { bytes: Buffer; base64: readonly [string, string, string] };
}

/** Each cached run of shared extensions, by the object of its first member. */
const sharedRuns = new WeakMap<object, SharedExtensions[]>();

/** A member kept the same object from quote to quote: anything but the quote's breakdown, which is per request. */
function isShared(name: string, value: unknown): value is object {
  return name !== "quote" && typeof value === "object" && value !== null;
}

/** The cached run of these shared members (the same names and objects), written the first time it is seen. */
function sharedRun(names: string[], values: object[]): SharedExtensions {
  let candidates = sharedRuns.get(values[0]!);
  if (!candidates) sharedRuns.set(values[0]!, (candidates = []));
  for (const run of candidates) {
    if (
      run.names.length === names.length &&
      run.names.every((name, i) => name === names[i] && run.values[i] === values[i])
    ) {
      return run;
    }
  }
  const json = names.map((name, i) => `${JSON.stringify(name)}:${JSON.stringify(values[i])}`).join(",");
  const run = { names, values, json };
  // A path's runs are few (one per set of schemes offered); a bound keeps a misuse from growing it for good.
  if (candidates.length < 16) candidates.push(run);
  return run;
}

/**
 * The JSON members of `extensions`, split in two: those written for this document (the quote's breakdown, and any
 * member after it that is not an object), and the run of shared objects that ends them, written once.
 */
export function extensionMembers(extensions: Record<string, unknown>): {
  own: string;
  shared: SharedExtensions | undefined;
} {
  const entries = Object.entries(extensions);
  let start = entries.length;
  while (start > 0 && isShared(entries[start - 1]![0], entries[start - 1]![1])) start--;
  const own = entries
    .slice(0, start)
    .map(([name, value]) => `${JSON.stringify(name)}:${JSON.stringify(value)}`)
    .join(",");
  if (start === entries.length) return { own, shared: undefined };
  const rest = entries.slice(start);
  return {
    own,
    shared: sharedRun(
      rest.map(([name]) => name),
      rest.map(([, value]) => value as object),
    ),
  };
}

/**
 * A document's JSON as two strings, `head` then `tail`: JSON.stringify of `head` with `extensions` as its last
 * member. The tail is the shared run's JSON and the document's end (`}}`), the same string for every quote of a path;
 * without a shared run it is empty. `head` may be its JSON already (headJsonOf's), for two documents of one head.
 */
export function documentParts(
  head: object | string,
  members: ReturnType<typeof extensionMembers> | undefined,
): { head: string; tail: string; shared: SharedExtensions | undefined } {
  const headJson = typeof head === "string" ? head : headJsonOf(head);
  if (!members) return { head: headJson, tail: "", shared: undefined };
  const separator = headJson === "{}" ? "" : ",";
  const { own, shared } = members;
  const opened = `${headJson.slice(0, -1)}${separator}"extensions":{${own}`;
  if (!shared) return { head: `${opened}}}`, tail: "", shared };
  return { head: own === "" ? opened : `${opened},`, tail: `${shared.json}}}`, shared };
}

/**
 * Base64 of the UTF-8 of `head` + `shared`'s tail (documentParts): what the PAYMENT-REQUIRED header carries. The
 * tail's base64 is computed once per alignment (the head's length modulo 3), so only the head is encoded per quote.
 */
export function base64Json(parts: { head: string; tail: string; shared: SharedExtensions | undefined }): string {
  const { head, shared } = parts;
  if (!shared) return Buffer.from(head + parts.tail, "utf8").toString("base64");
  let encoded = shared.encoded;
  if (!encoded) {
    const bytes = Buffer.from(parts.tail, "utf8");
    const base64 = [0, 1, 2].map((skip) => bytes.subarray(skip).toString("base64")) as [string, string, string];
    shared.encoded = encoded = { bytes, base64 };
  }
  const headBytes = Buffer.from(head, "utf8");
  // The bytes of the tail that complete the head's last group of three.
  const borrowed = (3 - (headBytes.length % 3)) % 3;
  const aligned = borrowed === 0 ? headBytes : Buffer.concat([headBytes, encoded.bytes.subarray(0, borrowed)]);
  return aligned.toString("base64") + encoded.base64[borrowed];
}

/**
 * JSON.stringify of `head` with `extensions` as its last member, faster on the path of every quote: the shared
 * members (every extension object but the quote's breakdown) are written once and spliced in.
 */
export function jsonWithExtensions(head: object, extensions: Record<string, unknown> | undefined): string {
  const { head: written, tail } = documentParts(head, extensions && extensionMembers(extensions));
  return written + tail;
}

/** JSON.stringify of a 402 document, the same text, its shared extensions written once (jsonWithExtensions). */
export function paymentRequiredJson(document: PaymentRequired): string {
  const { extensions, ...rest } = document;
  return jsonWithExtensions(rest, extensions);
}

/** The JSON of each frozen entry of `accepts` written so far: most quotes offer the same few (requirements-templates.ts). */
const entryJson = new WeakMap<object, string>();

/** JSON.stringify of an entry of `accepts`, written once for an entry that cannot change (frozen). */
function acceptedJson(entry: unknown): string {
  if (typeof entry !== "object" || entry === null || !Object.isFrozen(entry)) return JSON.stringify(entry) ?? "null";
  let json = entryJson.get(entry);
  if (json === undefined) entryJson.set(entry, (json = JSON.stringify(entry)));
  return json;
}

/** JSON.stringify(head), the same text, its `accepts` entries' JSON written once each (acceptedJson). */
export function headJsonOf(head: object): string {
  const { accepts } = head as { accepts?: unknown };
  if (!Array.isArray(accepts)) return JSON.stringify(head);
  const members: string[] = [];
  for (const [name, value] of Object.entries(head)) {
    const json = name === "accepts" ? `[${accepts.map(acceptedJson).join(",")}]` : JSON.stringify(value);
    // As JSON.stringify: a member whose value has no JSON (undefined, a function) is left out.
    if (json !== undefined) members.push(`${JSON.stringify(name)}:${json}`);
  }
  return `{${members.join(",")}}`;
}

import { format } from "prettier";
import type { Endpoint } from "../context/endpoint";

/** The file that documents the endpoints, relative to the repository's root. */
export const ENDPOINT_DOC = "docs/api.md";

const LIST_START = "<!-- endpoint list: npm run docs:endpoints -->";
const LIST_END = "<!-- end of endpoint list -->";

/** The width of the docs' lines, as prettier's printWidth. */
const WIDTH = 120;

function access(endpoint: Endpoint): string {
  if (endpoint.kind === "free") return endpoint.access.includes("prepaid") ? "prepaid key (bearer), free" : "free";
  return endpoint.access.includes("prepaid") ? "x402 per request, or a prepaid key (bearer)" : "x402 per request";
}

/** A word that would open a list, a heading or a quote at the start of a line. */
const opensBlock = (word: string) => /^([-+*>#]|\d+[.)])/.test(word);

/** One list item, wrapped at the docs' width; a continuation line never starts with what would open a block. */
function listItem(text: string): string {
  const lines: string[] = [];
  let line = "-";
  for (const word of text.split(" ")) {
    if (line.length + 1 + word.length > WIDTH && line !== "-" && !opensBlock(word)) {
      lines.push(line);
      line = `  ${word}`;
    } else line += ` ${word}`;
  }
  return [...lines, line].join("\n");
}

/** The docs' list of endpoints, in Markdown: one item an endpoint, its aliases beside its path. */
export function endpointList(endpoints: readonly Endpoint[]): string {
  return endpoints
    .map((endpoint) => {
      const [path, ...aliases] = endpoint.paths.map((candidate) => `\`${candidate}\``);
      const paths = aliases.length > 0 ? `${path} (alias ${aliases.join(", ")})` : path;
      // A summary's `<key>` is text, not an HTML tag to the Markdown reader.
      const summary = endpoint.docs.summary.replace(/</g, "&lt;");
      return listItem(`${endpoint.method} ${paths}: ${summary}. Payment: ${access(endpoint)}.`);
    })
    .join("\n");
}

/** `doc` (the text of ENDPOINT_DOC) with its endpoint list as the list gives it, formatted as prettier formats it. */
export async function withEndpointList(doc: string, endpoints: readonly Endpoint[]): Promise<string> {
  const start = doc.indexOf(LIST_START);
  const end = doc.indexOf(LIST_END);
  if (start === -1 || end < start) throw new Error(`${ENDPOINT_DOC} has no ${LIST_START} ... ${LIST_END} section`);
  const list = await format(endpointList(endpoints), { parser: "markdown", printWidth: WIDTH });
  return `${doc.slice(0, start + LIST_START.length)}\n\n${list}\n${doc.slice(end)}`;
}

import { format } from "prettier";
import type { Endpoint } from "./endpoint";

const TABLE_START = "<!-- endpoint table: npm run docs:endpoints -->";
const TABLE_END = "<!-- end of endpoint table -->";

function access(endpoint: Endpoint): string {
  if (endpoint.kind === "free") return endpoint.access.includes("prepaid") ? "prepaid key (bearer), free" : "free";
  return endpoint.access.includes("prepaid") ? "x402 per request, or a prepaid key (bearer)" : "x402 per request";
}

/** The README's table of endpoints, in Markdown: one row an endpoint, its aliases beside its path. */
export function endpointTable(endpoints: readonly Endpoint[]): string {
  const rows = endpoints.map((endpoint) => {
    const [path, ...aliases] = endpoint.paths.map((candidate) => `\`${candidate}\``);
    const paths = aliases.length > 0 ? `${path}, alias ${aliases.join(", ")}` : path;
    return `| ${endpoint.method} | ${paths} | ${access(endpoint)} | ${endpoint.docs.summary} |`;
  });
  return ["| Method | Path | Payment | What |", "| --- | --- | --- | --- |", ...rows].join("\n");
}

/** The README with its endpoint table as the list gives it, formatted as prettier formats the file. */
export async function readmeWithTable(readme: string, endpoints: readonly Endpoint[]): Promise<string> {
  const start = readme.indexOf(TABLE_START);
  const end = readme.indexOf(TABLE_END);
  if (start === -1 || end < start) throw new Error(`README.md has no ${TABLE_START} ... ${TABLE_END} section`);
  const table = await format(endpointTable(endpoints), { parser: "markdown", printWidth: 120 });
  return `${readme.slice(0, start + TABLE_START.length)}\n\n${table}\n${readme.slice(end)}`;
}

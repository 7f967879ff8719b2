import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ENDPOINT_DOC, withEndpointList } from "./endpoint-table";
import { defaultCatalog } from "../../config/catalog/default-catalog";
import { endpointsFor } from "./index";

/** The docs document the service on the spec's tables. */
const endpoints = endpointsFor(defaultCatalog());

const root = resolve(__dirname, "../..");

function filesUnder(directory: string): string[] {
  return readdirSync(directory).flatMap((entry) => {
    const path = join(directory, entry);
    return statSync(path).isDirectory() ? filesUnder(path) : [relative(root, path)];
  });
}

/** The URL path a file under app/ serves (`app/keys/page.tsx` -> `/keys`). */
const servedPath = (file: string) => `/${file.split("/").slice(1, -1).join("/")}`;

describe("the endpoint list", () => {
  const routes = endpoints.flatMap((endpoint) => endpoint.paths.map((path) => `${endpoint.method} ${path}`));

  it("declares each method and path once", () => {
    expect(new Set(routes).size).toBe(routes.length);
    expect(routes.length).toBe(32); // the spec's 19, GET /metrics for operators, GET /v1/channels/refund for payers, the six owner routes of /v1/prepaid/keys, POST /prepaid/codes/top-up, POST /v1/messages and /v1/messages/count_tokens with their /api aliases
  });

  it("is served by app/serve.mjs alone: the framework has no route file", () => {
    const appFiles = filesUnder(join(root, "app"));
    expect(appFiles.filter((file) => /\/route\.(ts|tsx|js|mjs)$/.test(file))).toEqual([]);
  });

  it("shares no path with a console page", () => {
    const pages = filesUnder(join(root, "app"))
      .filter((file) => /\/page\.tsx$/.test(file))
      .map(servedPath);
    expect(pages.sort()).toEqual(["/", "/keys", "/keys/mine", "/operator", "/quota"]);
    for (const endpoint of endpoints) for (const path of endpoint.paths) expect(pages).not.toContain(path);
  });

  it("is the endpoint list of docs/api.md (npm run docs:endpoints writes it)", async () => {
    const doc = readFileSync(join(root, ENDPOINT_DOC), "utf8");
    expect(doc).toBe(await withEndpointList(doc, endpoints));
  });
});

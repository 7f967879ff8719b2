// `npm run docs:endpoints`: rewrites the endpoint list of docs/api.md from the endpoint list.
import { readFileSync, writeFileSync } from "node:fs";
import { ENDPOINT_DOC, withEndpointList } from "./endpoint-table";
import { defaultCatalog } from "../../config/catalog/default-catalog";
import { endpointsFor } from "./index";

// The docs document the service on the spec's tables.
const endpoints = endpointsFor(defaultCatalog());
writeFileSync(ENDPOINT_DOC, await withEndpointList(readFileSync(ENDPOINT_DOC, "utf8"), endpoints));

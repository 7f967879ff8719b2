// `npm run docs:endpoints`: rewrites the README's endpoint table from the endpoint list.
import { readFileSync, writeFileSync } from "node:fs";
import { readmeWithTable } from "./endpoint-table";
import { defaultCatalog } from "../../config/catalog/default-catalog";
import { endpointsFor } from "./index";

// The README documents the service on the spec's tables.
const endpoints = endpointsFor(defaultCatalog());
writeFileSync("README.md", await readmeWithTable(readFileSync("README.md", "utf8"), endpoints));

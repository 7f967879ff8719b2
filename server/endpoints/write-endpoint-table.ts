// `npm run docs:endpoints`: rewrites the README's endpoint table from the endpoint list.
import { readFileSync, writeFileSync } from "node:fs";
import { readmeWithTable } from "./endpoint-table";
import { endpoints } from "./index";

writeFileSync("README.md", await readmeWithTable(readFileSync("README.md", "utf8"), endpoints));

import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { resolvedPaths } from "./caller-paths";

const caller = "/home/operator/site";
const fromCaller = (path: string) => resolve(caller, path);

describe("paths in the environment", () => {
  it("makes a relative PAYSVC_CATALOG, SQLite DATABASE_URL and DATA_DIR absolute against the caller's directory", () => {
    expect(
      resolvedPaths(
        { PAYSVC_CATALOG: "catalog.json", DATABASE_URL: "file:./paysvc.sqlite", DATA_DIR: "dev-data" },
        fromCaller,
      ),
    ).toEqual({
      PAYSVC_CATALOG: "/home/operator/site/catalog.json",
      DATABASE_URL: "file:/home/operator/site/paysvc.sqlite",
      DATA_DIR: "/home/operator/site/dev-data",
    });
    expect(resolvedPaths({ DATABASE_URL: "data/ledger.sqlite" }, fromCaller)).toEqual({
      DATABASE_URL: "file:/home/operator/site/data/ledger.sqlite",
    });
    expect(resolvedPaths({ PAYSVC_CATALOG: " ../catalog.json " }, fromCaller)).toEqual({
      PAYSVC_CATALOG: "/home/operator/catalog.json",
    });
  });

  it("leaves absolute paths, PostgreSQL, in-memory SQLite, unreadable URLs and unset variables (dev's defaults) alone", () => {
    for (const env of [
      {},
      { PAYSVC_CATALOG: "/etc/paysvc/catalog.json", DATA_DIR: "/var/lib/paysvc" },
      { PAYSVC_CATALOG: "", DATABASE_URL: "  " },
      { DATABASE_URL: "file:/var/lib/paysvc/paysvc.sqlite" },
      { DATABASE_URL: "file:///var/lib/paysvc/paysvc.sqlite" },
      { DATABASE_URL: "postgres://paysvc:secret@db:5432/paysvc" },
      { DATABASE_URL: ":memory:" },
      { DATABASE_URL: "file::memory:" },
      { DATABASE_URL: "mysql://db/paysvc" },
    ]) {
      expect(resolvedPaths(env, fromCaller)).toEqual({});
    }
  });
});

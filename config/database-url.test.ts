import { describe, expect, it } from "vitest";
import { databaseLocation, isTransientDatabase, redactedDatabaseUrl } from "./database-url";
import { ConfigurationError } from "./env";
import { loadServiceConfig } from "./service-config";

describe("DATABASE_URL", () => {
  it("names SQLite by file: URL, bare path or :memory:, and PostgreSQL by either scheme", () => {
    expect(databaseLocation("file:./data/paysvc.sqlite")).toEqual({ engine: "sqlite", path: "./data/paysvc.sqlite" });
    expect(databaseLocation("file:///var/lib/paysvc.sqlite")).toEqual({
      engine: "sqlite",
      path: "/var/lib/paysvc.sqlite",
    });
    expect(databaseLocation("data/x.sqlite")).toEqual({ engine: "sqlite", path: "data/x.sqlite" });
    expect(databaseLocation(":memory:")).toEqual({ engine: "sqlite", path: ":memory:" });
    for (const url of ["postgres://u:p@db:5432/paysvc", "postgresql://db/paysvc?sslmode=require"]) {
      expect(databaseLocation(url)).toEqual({ engine: "postgresql", url });
    }
  });

  it("refuses other schemes and PostgreSQL URLs without a host or database, never showing the password", () => {
    expect(() => databaseLocation("mysql://u:secret@db/paysvc")).toThrow(/unsupported scheme "mysql:"/);
    expect(() => databaseLocation("postgres://u:secret@db:5432")).toThrow(/names no database/);
    expect(() => databaseLocation("postgres://u:secret@db:99999/paysvc")).toThrow(/not a valid PostgreSQL URL/);
    for (const url of ["postgres://u:secret@db:5432", "postgres://u:secret@db:99999/paysvc"]) {
      expect(() => databaseLocation(url)).toThrow(/u:\*\*\*@db/);
      expect(() => databaseLocation(url)).not.toThrow(/secret/);
    }
  });

  it("is checked with the rest of the configuration", () => {
    const env = {
      PAY_TO: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
      FACILITATOR_URL: "http://127.0.0.1:9",
      UPSTREAM_BASE_URL: "http://127.0.0.1:9/v1",
    };
    expect(() => loadServiceConfig({ ...env, DATABASE_URL: "postgres://u:secret@/paysvc" })).toThrow(
      ConfigurationError,
    );
    expect(() => loadServiceConfig({ ...env, DATABASE_POOL_SIZE: "0" })).toThrow(/DATABASE_POOL_SIZE/);
    expect(loadServiceConfig({ ...env, DATABASE_POOL_SIZE: "5" }).databasePoolSize).toBe(5);
  });

  it("knows the SQLite databases that are lost when their process ends", () => {
    for (const url of [":memory:", "file::memory:", "file::memory:?cache=shared", "file:", "file:x?mode=memory"]) {
      expect(isTransientDatabase(databaseLocation(url)), url).toBe(true);
    }
    for (const url of ["file:./data/paysvc.sqlite", "/var/lib/memory.sqlite", "postgres://db/memory"]) {
      expect(isTransientDatabase(databaseLocation(url)), url).toBe(false);
    }
  });

  it("is shown with its password masked", () => {
    expect(redactedDatabaseUrl("postgres://paysvc:s3:cr@t@db:5432/paysvc")).toBe(
      "postgres://paysvc:***@db:5432/paysvc",
    );
    expect(redactedDatabaseUrl("postgres://db/paysvc")).toBe("postgres://db/paysvc");
  });
});

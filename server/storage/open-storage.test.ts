import { describe, expect, it } from "vitest";
import { openStorage } from "./open-storage";
import { useTestDatabases } from "../../cli/dev-stack/test-databases";

const databases = useTestDatabases();

describe("opening PostgreSQL storage", () => {
  it("fails at once with the server named and the password hidden when nothing listens there", async () => {
    const started = Date.now();
    const failure = openStorage("postgres://paysvc:hunter2@127.0.0.1:1/paysvc");
    await expect(failure).rejects.toThrow(
      /cannot use the PostgreSQL database at postgres:\/\/paysvc:\*\*\*@127\.0\.0\.1:1\/paysvc/,
    );
    await expect(failure).rejects.not.toThrow(/hunter2/);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("says why a real server refused: a wrong password, a database that does not exist", async () => {
    const url = new URL(await databases.newDatabaseUrl("postgresql"));
    const wrongPassword = new URL(url);
    wrongPassword.password = "not-the-password";
    await expect(openStorage(wrongPassword.href)).rejects.toThrow(/password authentication failed/);
    await expect(openStorage(wrongPassword.href)).rejects.not.toThrow(/not-the-password/);
    const missing = new URL(url);
    missing.pathname = "/no_such_database";
    await expect(openStorage(missing.href)).rejects.toThrow(/database "no_such_database" does not exist/);
  });
});

import type Database from "better-sqlite3";

const STATEMENT_CACHE_SIZE = 256;

/**
 * drizzle prepares every query it runs, and better-sqlite3 compiles the SQL on every prepare: on the prepaid path
 * that was most of the database time. A compiled statement can be run again with other values, so the most
 * recently used ones are kept, keyed by their SQL text (which holds placeholders, never values).
 */
export function reuseStatements(client: Database.Database): void {
  const prepare = client.prepare.bind(client);
  const statements = new Map<string, Database.Statement>();
  client.prepare = ((source: string) => {
    const cached = statements.get(source);
    // A statement still being iterated cannot be run again until the iteration ends.
    if (cached && !cached.busy) {
      statements.delete(source);
      statements.set(source, cached);
      // drizzle switches a statement to raw (array) rows for some reads; a fresh statement returns objects.
      if (cached.reader) cached.raw(false);
      return cached;
    }
    const statement = prepare(source);
    statements.set(source, statement);
    if (statements.size > STATEMENT_CACHE_SIZE) statements.delete(statements.keys().next().value as string);
    return statement;
  }) as typeof client.prepare;
}

import { join } from "node:path";
import { readMigrationFiles, type MigrationMeta } from "drizzle-orm/migrator";
import type { Engine } from "../../config/database-url";

/** Where `npm run db:generate` writes each engine's migrations. */
export function migrationsFolder(engine: Engine): string {
  return join(process.cwd(), "server", "storage", engine === "sqlite" ? "sqlite" : "postgres", "migrations");
}

/**
 * The migrations not applied yet: those newer than the last one recorded, as drizzle's own migrator decides (the
 * record table is drizzle's, so databases it migrated carry on). Each engine applies them inside its own lock,
 * so that of two processes starting at once one migrates and the other then finds nothing left to do.
 */
export function pendingMigrations(engine: Engine, lastAppliedAt: number | undefined): MigrationMeta[] {
  const all = readMigrationFiles({ migrationsFolder: migrationsFolder(engine) });
  return all.filter((migration) => lastAppliedAt === undefined || lastAppliedAt < migration.folderMillis);
}

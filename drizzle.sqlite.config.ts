import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "sqlite",
  schema: "./server/storage/sqlite/schema.ts",
  out: "./server/storage/sqlite/migrations",
});

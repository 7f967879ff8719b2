import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "postgresql",
  schema: "./server/storage/postgres/schema.ts",
  out: "./server/storage/postgres/migrations",
});

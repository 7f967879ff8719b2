import { frameworkRuntime } from "./config/framework-runtime";

/** Runs once when the framework's server starts (`next start`, or app/serve.mjs preparing it). */
export async function register(): Promise<void> {
  // The framework also builds this file for the edge runtime, where nothing here applies.
  if (frameworkRuntime() !== "nodejs") return;
  const { serverModule } = await import("./app/server-module");
  const server = await serverModule();
  server.stampPeerAddresses();
  // The database is reached and migrated before the first request (app/serve.mjs has done so already).
  await server.startAppContext();
}

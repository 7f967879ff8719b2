/** Runs once when the framework's server starts (`next start`, or app/serve.mjs preparing it). */
export async function register(): Promise<void> {
  // The framework's own flag (it also builds this file for the edge runtime, where nothing here applies).
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  const { serverModule } = await import("./app/server-module");
  (await serverModule()).stampPeerAddresses();
}

import { serverModule } from "./app/server-module";

/** Runs once when the framework's server starts (`next start`, or app/serve.mjs preparing it). */
export async function register(): Promise<void> {
  (await serverModule()).stampPeerAddresses();
}

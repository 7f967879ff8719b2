import { headers } from "next/headers";
import { serverModule } from "./server-module";

/** The deployment as the visitor reaches it, for server-rendered pages. */
export async function currentDeployment() {
  const host = (await headers()).get("host") ?? "localhost";
  const server = await serverModule();
  return { server, ...server.deploymentFor(host) };
}

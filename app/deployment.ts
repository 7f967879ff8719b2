import { headers } from "next/headers";
import { getAppContext } from "../server/app-context";
import { deploymentFacts } from "../server/discovery/discovery-documents";

/** The deployment as the visitor reaches it, for server-rendered pages. */
export async function currentDeployment() {
  const incoming = await headers();
  const host = incoming.get("host") ?? "localhost";
  const request = new Request(`http://${host}/`, { headers: { host } });
  const context = getAppContext();
  return { context, facts: deploymentFacts(context, request) };
}

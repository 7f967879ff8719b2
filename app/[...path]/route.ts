import { serverModule } from "../server-module";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

/** Every API endpoint, routed by the server's endpoint list (server/endpoints): the one route file. */
async function handle(request: Request): Promise<Response> {
  return (await serverModule()).handleWebRequest(request);
}

export { handle as GET, handle as POST, handle as PUT, handle as PATCH, handle as DELETE, handle as OPTIONS };

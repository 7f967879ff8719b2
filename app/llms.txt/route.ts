import { getAppContext } from "../../server/app-context";
import { serveDiscoveryDocument } from "../../server/discovery/discovery-documents";
import { handleRoute } from "../../server/http/handle-route";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

export const GET = handleRoute(async (request) => serveDiscoveryDocument(getAppContext(), request, "llms.txt"));

import { getAppContext } from "../../../../server/app-context";
import { handleRoute } from "../../../../server/http/handle-route";
import { prepaidStatus } from "../../../../server/prepaid/prepaid-status";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

export const GET = handleRoute(async (request) => prepaidStatus(getAppContext(), request));

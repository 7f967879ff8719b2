import { getAppContext } from "../../server/app-context";
import { healthResponse } from "../../server/health/check-health";
import { handleRoute } from "../../server/http/handle-route";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

export const GET = handleRoute(() => healthResponse(getAppContext()));

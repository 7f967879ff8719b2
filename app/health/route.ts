import { getAppContext } from "../../server/app-context";
import { checkHealth } from "../../server/health/check-health";
import { handleRoute } from "../../server/http/handle-route";
import { jsonResponse } from "../../server/http/json-response";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

export const GET = handleRoute(async () => {
  const health = await checkHealth(getAppContext());
  return jsonResponse(health.body, { status: health.status, headers: { "Cache-Control": "no-store" } });
});

import { getAppContext } from "../../server/app-context";
import { checkHealth } from "../../server/health/check-health";
import { handleRoute } from "../../server/http/handle-route";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

export const GET = handleRoute(async () => {
  const health = await checkHealth(getAppContext());
  return Response.json(health.body, { status: health.status, headers: { "Cache-Control": "no-store" } });
});

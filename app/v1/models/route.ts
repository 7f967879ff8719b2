import { getAppContext } from "../../../server/app-context";
import { handleRoute } from "../../../server/http/handle-route";
import { listModels } from "../../../server/models/list-models";
import { jsonResponse } from "../../../server/http/json-response";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

export const GET = handleRoute(async () => jsonResponse(listModels(getAppContext().config.network)));

import { getAppContext } from "../../../server/app-context";
import { handleRoute } from "../../../server/http/handle-route";
import { listModels } from "../../../server/models/list-models";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

export const GET = handleRoute(async () => Response.json(listModels(getAppContext().config.network)));

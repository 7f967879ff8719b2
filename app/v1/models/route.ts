import { getAppContext } from "../../../server/app-context";
import { handleRoute } from "../../../server/http/handle-route";
import { listModels } from "../../../server/models/list-models";
import { jsonAnswer } from "../../../server/http/api-answer";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

export const GET = handleRoute(async () => jsonAnswer(listModels(getAppContext().config.network)));

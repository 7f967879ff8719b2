import { getAppContext } from "../../../server/app-context";
import { handleRoute } from "../../../server/http/handle-route";
import { createResponse } from "../../../server/responses/create-response";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

export const POST = handleRoute((request) => createResponse(getAppContext(), request));

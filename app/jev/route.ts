import { getAppContext } from "../../server/app-context";
import { createDecision } from "../../server/decisions/create-decision";
import { handleRoute } from "../../server/http/handle-route";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

export const POST = handleRoute((request) => createDecision(getAppContext(), request));

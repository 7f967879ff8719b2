import { getAppContext } from "../../../../../../server/app-context";
import { freeChatQuota } from "../../../../../../server/free-tier/create-free-chat-completion";
import { handleRoute } from "../../../../../../server/http/handle-route";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

export const GET = handleRoute(async (request) => freeChatQuota(getAppContext(), request));

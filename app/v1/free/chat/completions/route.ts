import { getAppContext } from "../../../../../server/app-context";
import { createFreeChatCompletion } from "../../../../../server/free-tier/create-free-chat-completion";
import { handleRoute } from "../../../../../server/http/handle-route";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

export const POST = handleRoute((request) => createFreeChatCompletion(getAppContext(), request));

import { getAppContext } from "../../../../../server/app-context";
import { createChatCompletion } from "../../../../../server/chat/create-chat-completion";
import { handleRoute } from "../../../../../server/http/handle-route";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

export const POST = handleRoute((request) => createChatCompletion(getAppContext(), request));

import { getAppContext } from "../../../../../server/app-context";
import { handleRoute } from "../../../../../server/http/handle-route";
import { createImage } from "../../../../../server/images/create-image";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

export const POST = handleRoute((request) => createImage(getAppContext(), request, false));

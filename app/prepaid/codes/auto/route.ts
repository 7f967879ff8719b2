import { getAppContext } from "../../../../server/app-context";
import { handleRoute } from "../../../../server/http/handle-route";
import { purchasePrepaidCode } from "../../../../server/prepaid/purchase-prepaid-code";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

export const POST = handleRoute((request) => purchasePrepaidCode(getAppContext(), request, true));

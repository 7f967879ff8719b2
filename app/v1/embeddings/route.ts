import { getAppContext } from "../../../server/app-context";
import { createEmbeddings } from "../../../server/embeddings/create-embeddings";
import { handleRoute } from "../../../server/http/handle-route";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

export const POST = handleRoute((request) => createEmbeddings(getAppContext(), request));

import type { ModelCatalog } from "../../config/catalog/model-catalog";
import { chatDialect } from "../dialects/chat-dialect";
import { dialectEndpoint } from "../dialects/dialect-endpoint";

/** Endpoints 1 and 2, the chat dialect's endpoint (as bench/ builds it on its own). */
export const chatCompletions = (catalog: ModelCatalog) => dialectEndpoint(chatDialect, { catalog });

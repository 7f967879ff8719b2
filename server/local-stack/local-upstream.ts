import { gptModelIds } from "../../config/models";
import { devChatCompletion, type DevStreamOptions } from "./dev-chat";
import { devDecisions } from "./dev-decisions";
import { devEmbeddings } from "./dev-embeddings";
import { devImageFile, devImageEdit, devImageGeneration } from "./dev-images";
import { listen, sendJson, type JsonHttpServer } from "./json-http-server";

export interface LocalUpstreamOptions extends DevStreamOptions {
  port: number;
}

const PROVIDER_NAME = "paysvc local development provider";

/**
 * An OpenAI-compatible development provider, so every endpoint answers without internet: deterministic
 * completions with real token usage (streamed as server-sent events in several chunks), real PNG images, and
 * structured decisions. Failures on demand: see dev-faults.ts.
 */
export async function startLocalUpstream(options: LocalUpstreamOptions): Promise<JsonHttpServer> {
  return listen(
    async (request, response) => {
      const path = (request.url ?? "/").split("?")[0];
      if (request.method === "GET" && path === "/v1/models") {
        return sendJson(response, 200, {
          object: "list",
          data: gptModelIds.map((id) => ({ id, object: "model", created: 0, owned_by: PROVIDER_NAME })),
        });
      }
      if (request.method === "POST" && path === "/v1/chat/completions")
        return devChatCompletion(request, response, options);
      if (request.method === "POST" && path === "/v1/images/generations") return devImageGeneration(request, response);
      if (request.method === "POST" && path === "/v1/images/edits") return devImageEdit(request, response);
      if (request.method === "GET" && path?.startsWith("/v1/images/files/")) return devImageFile(path, response);
      if (request.method === "POST" && path === "/v1/decisions") return devDecisions(request, response);
      if (request.method === "POST" && path === "/v1/embeddings") return devEmbeddings(request, response);
      sendJson(response, 404, {
        error: { message: `no route ${request.method} ${path}`, type: "invalid_request_error" },
      });
    },
    options.port,
    "local upstream",
  );
}

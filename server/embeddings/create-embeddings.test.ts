import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadServiceConfig } from "../../config/env";
import { MAX_REQUEST_BODY_BYTES } from "../../config/limits";
import { createAppContext, type AppContext } from "../app-context";
import { answerErrors } from "../http/handle-route";
import type { ApiRequest } from "../http/api-request";
import type { JsonHttpServer } from "../local-stack/json-http-server";
import { startLocalUpstream } from "../local-stack/local-upstream";
import { createEmbeddings } from "./create-embeddings";

describe("endpoint 10's refusals all have the spec's error body", () => {
  let provider: JsonHttpServer;
  let context: AppContext;
  beforeAll(async () => {
    provider = await startLocalUpstream({ port: 0 });
    context = createAppContext(
      loadServiceConfig({
        PAY_TO: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
        FACILITATOR_URL: "http://127.0.0.1:9",
        UPSTREAM_BASE_URL: `${provider.url}/v1`,
        DATABASE_URL: "file::memory:",
      }),
    );
  });
  afterAll(async () => {
    context.database.$client.close();
    await provider.stop();
  });

  const handler = answerErrors((request) => createEmbeddings(context, request));
  const post = async (body: string | Uint8Array, contentType = "application/json") => {
    const request: ApiRequest = {
      method: "POST",
      url: "http://service.test/v1/embeddings",
      headers: new Headers({ "content-type": contentType }),
      body: null,
      bodyBytes: typeof body === "string" ? new TextEncoder().encode(body) : body,
    };
    const answer = await handler(request);
    return { status: answer.status, body: JSON.parse(answer.body as string) as Record<string, unknown> };
  };

  /** "Endpoint 10 error body: error object with message, type (constant invalid_request), param (string), code, details". */
  const specBody = (param: string) => ({
    error: {
      message: expect.any(String),
      type: "invalid_request",
      param,
      code: expect.any(String),
      details: {
        expected: expect.any(String),
        schema: expect.objectContaining({
          input: expect.anything(),
          input_type: expect.anything(),
          encoding_format: expect.anything(),
          model: expect.anything(),
        }),
      },
    },
  });

  it("answers a body that is not JSON, empty, or not an object with 400 and a string param", async () => {
    for (const body of ["{oops", "", "[]", "null", '"text"', "42"]) {
      const answer = await post(body);
      expect(answer.status, body).toBe(400);
      expect(answer.body, body).toEqual(specBody("body"));
    }
  });

  it("keeps 415 for a body that is not sent as JSON, naming the header to fix", async () => {
    const answer = await post('{"input":"x"}', "text/plain");
    expect(answer.status).toBe(415);
    expect(answer.body).toEqual(specBody("content-type"));
    expect(answer.body.error).toMatchObject({ code: "unsupported_media_type" });
  });

  it("keeps 413 for a body over the size limit", async () => {
    const answer = await post(new Uint8Array(MAX_REQUEST_BODY_BYTES + 1));
    expect(answer.status).toBe(413);
    expect(answer.body).toEqual(specBody("body"));
    expect(answer.body.error).toMatchObject({ code: "request_too_large" });
  });

  it("names the field for a wrong field, and still serves a good body", async () => {
    expect(await post('{"input":"x","encoding_format":"int8"}')).toEqual({
      status: 400,
      body: specBody("encoding_format"),
    });
    const served = await post('{"input":["harbor","lantern"]}');
    expect(served.status).toBe(200);
    expect((served.body.data as unknown[]).length).toBe(2);
  });
});

import { beforeAll, describe, expect, it } from "vitest";
import { freeChat } from "../config/free-tier";
import { MAX_REQUEST_BODY_BYTES } from "../config/limits";
import { keepAliveClient } from "./support/keep-alive";
import { stack } from "./support/payments";

// Every early refusal must leave its keep-alive connection usable: the next request on it is answered (or, after
// a body too large to read on, the connection is closed and the next request opens another).
describe("a refused body on a keep-alive connection", () => {
  let base = "";
  beforeAll(() => {
    base = stack().appUrl;
  });

  const health = (client: ReturnType<typeof keepAliveClient>) => client.send("GET", "/health");

  it("415 for a body that is not JSON, read whole or streamed, then the next request on the connection", async () => {
    const client = keepAliveClient(base);
    try {
      for (const size of [100, 200 * 1024]) {
        const refused = await client.send("POST", "/v1/chat/completions", {
          headers: { "content-type": "text/plain", "content-length": String(size) },
          body: Buffer.alloc(size, "a"),
        });
        expect(refused.status).toBe(415);
        expect(JSON.parse(refused.text).error.code).toBe("unsupported_media_type");
        const next = await health(client);
        expect(next.status).toBe(200);
        expect(next.reusedSocket).toBe(true);
      }
    } finally {
      client.close();
    }
  });

  it("413 over an endpoint's smaller limit (free chat, 1 MiB): the rest is drained and the connection reused", async () => {
    const client = keepAliveClient(base);
    try {
      const size = freeChat.maxBodyBytes + 512 * 1024;
      const refused = await client.send("POST", "/v1/free/chat/completions", {
        headers: { "content-type": "application/json", "content-length": String(size) },
        body: Buffer.alloc(size, " "),
      });
      expect(refused.status).toBe(413);
      const next = await health(client);
      expect(next.status).toBe(200);
      expect(next.reusedSocket).toBe(true);
    } finally {
      client.close();
    }
  });

  it("413 over the 24 MiB limit, declared: the rest is drained and the next request answered", async () => {
    const client = keepAliveClient(base, 30_000);
    try {
      const declared = await client.send("POST", "/v1/chat/completions", {
        headers: { "content-type": "application/json", "content-length": String(MAX_REQUEST_BODY_BYTES + 1) },
        body: Buffer.alloc(MAX_REQUEST_BODY_BYTES + 1, " "),
      });
      expect(declared.status).toBe(413);
      expect((await health(client)).status).toBe(200);
    } finally {
      client.close();
    }
  });

  it("413 over the 24 MiB limit, chunked: the next request is answered", async () => {
    const client = keepAliveClient(base, 30_000);
    try {
      const chunk = Buffer.alloc(1024 * 1024, " ");
      const chunked = await client.send("POST", "/v1/chat/completions", {
        headers: { "content-type": "application/json" },
        chunks: Array.from({ length: MAX_REQUEST_BODY_BYTES / chunk.byteLength + 1 }, () => chunk),
      });
      expect(chunked.status).toBe(413);
      expect((await health(client)).status).toBe(200);
    } finally {
      client.close();
    }
  });
});

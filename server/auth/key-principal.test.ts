import { describe, expect, it } from "vitest";
import type { ApiRequest } from "../http/api-request";
import { keyPrincipal } from "./key-principal";

const code = "paysvc_pk_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG";
const request = (headers: Record<string, string>): ApiRequest =>
  new Request("http://127.0.0.1:3000/v1/messages", { method: "POST", headers });

describe("the prepaid key a request presents", () => {
  it("is the bearer's prepaid code; any other bearer (an SDK's placeholder) is no key", () => {
    expect(keyPrincipal(request({ authorization: `Bearer ${code}` }))).toEqual({ kind: "key", code });
    expect(keyPrincipal(request({ authorization: `bearer   ${code}  ` }))).toEqual({ kind: "key", code });
    expect(keyPrincipal(request({ authorization: "Bearer x402" }))).toBeUndefined();
    expect(keyPrincipal(request({ authorization: `Basic ${code}` }))).toBeUndefined();
    expect(keyPrincipal(request({}))).toBeUndefined();
  });

  it("is read only where the API carries it: x-api-key before the bearer for Messages, never for OpenAI's", () => {
    const messages = ["x-api-key", "bearer"] as const;
    expect(keyPrincipal(request({ "x-api-key": code }))).toBeUndefined();
    expect(keyPrincipal(request({ "x-api-key": ` ${code} ` }), messages)).toEqual({ kind: "key", code });
    const both = { "x-api-key": code, authorization: `Bearer ${code.replace("a", "b")}` };
    expect(keyPrincipal(request(both), messages)).toEqual({ kind: "key", code });
    const placeholder = { "x-api-key": "x402", authorization: `Bearer ${code}` };
    expect(keyPrincipal(request(placeholder), messages)).toEqual({ kind: "key", code });
    expect(keyPrincipal(request({ "x-api-key": "x402" }), messages)).toBeUndefined();
  });
});

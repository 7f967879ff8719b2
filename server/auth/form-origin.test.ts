import { describe, expect, it } from "vitest";
import type { ApiRequest } from "../http/api-request";
import { fromThisSite } from "./form-origin";

function post(headers: Record<string, string>): ApiRequest {
  return new Request("http://127.0.0.1:3000/operator/session", { method: "POST", headers });
}

describe("a form POST from this site", () => {
  it("is one whose Origin names the host it was sent to, or PUBLIC_BASE_URL", () => {
    const host = { host: "pay.example" };
    expect(fromThisSite(post({ ...host, origin: "http://pay.example" }), undefined, false)).toBe(true);
    expect(fromThisSite(post({ ...host, origin: "https://pay.example" }), undefined, false)).toBe(true);
    expect(fromThisSite(post({ host: "pay.example:443", origin: "https://PAY.example" }), undefined, true)).toBe(true);
    expect(
      fromThisSite(post({ host: "127.0.0.1:3000", origin: "https://pay.example" }), "https://pay.example", true),
    ).toBe(true);
  });

  it("is not another site's, another port's, a null origin, or plain http when the site is served over https", () => {
    const host = { host: "pay.example" };
    expect(fromThisSite(post({ ...host, origin: "https://evil.example" }), undefined, false)).toBe(false);
    expect(fromThisSite(post({ ...host, origin: "https://pay.example.evil.example" }), undefined, false)).toBe(false);
    expect(fromThisSite(post({ ...host, origin: "https://pay.example:8443" }), undefined, false)).toBe(false);
    expect(fromThisSite(post({ ...host, origin: "null" }), undefined, false)).toBe(false);
    expect(fromThisSite(post({ ...host, origin: "not a url" }), undefined, false)).toBe(false);
    expect(fromThisSite(post({ ...host, origin: "http://pay.example" }), undefined, true)).toBe(false);
    expect(fromThisSite(post({ origin: "https://pay.example" }), undefined, true)).toBe(false);
  });

  it("without Origin (curl) is admitted unless Sec-Fetch-Site says it is another site's", () => {
    expect(fromThisSite(post({ host: "pay.example" }), undefined, true)).toBe(true);
    expect(fromThisSite(post({ "sec-fetch-site": "same-origin" }), undefined, true)).toBe(true);
    expect(fromThisSite(post({ "sec-fetch-site": "cross-site" }), undefined, true)).toBe(false);
    expect(fromThisSite(post({ "sec-fetch-site": "same-site" }), undefined, true)).toBe(false);
  });
});

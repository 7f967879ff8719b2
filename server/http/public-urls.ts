import type { ServiceConfig } from "../../config/service-config";
import type { ApiRequest } from "./api-request";

type UrlConfig = Pick<ServiceConfig, "publicBaseUrl" | "prepaid">;

/** The origin callers use: PUBLIC_BASE_URL, else the Host the caller sent (request.url names the bind address). */
export function publicOrigin(config: UrlConfig, request: ApiRequest): string {
  if (config.publicBaseUrl) return config.publicBaseUrl;
  const url = new URL(request.url);
  return `${url.protocol}//${request.headers.get("host") ?? url.host}`;
}

/** Where prepaid keys are used: PREPAID_API_BASE, else this deployment's origin + /v1. */
export function prepaidApiBase(config: UrlConfig, request: ApiRequest): string {
  return config.prepaid.apiBase ?? `${publicOrigin(config, request)}/v1`;
}

/**
 * The URL a caller used for this request: the configured public origin (set PUBLIC_BASE_URL behind a proxy),
 * else the Host the caller sent; the framework's own request.url names its bind address instead.
 */
export function resourceUrl(config: UrlConfig, request: ApiRequest): string {
  // publicOrigin's, with the request's URL parsed once for both (this is on the path of every quote).
  const url = new URL(request.url);
  const origin = config.publicBaseUrl
    ? config.publicBaseUrl
    : `${url.protocol}//${request.headers.get("host") ?? url.host}`;
  return `${origin}${url.pathname}`;
}

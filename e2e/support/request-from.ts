import { request } from "node:http";
import { stack } from "./payments";

/** An HTTP request sent from a chosen local address (127.0.0.0/8 all reach loopback), to play other hosts. */
export function requestFrom(
  localAddress: string,
  method: "GET" | "POST",
  path: string,
  options: { body?: unknown; headers?: Record<string, string>; base?: string } = {},
): Promise<{
  status: number;
  headers: Record<string, string | string[] | undefined>;
  json: () => unknown;
  text: string;
}> {
  const url = new URL(path, options.base ?? stack().appUrl);
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      url,
      {
        method,
        localAddress,
        headers: { ...(payload ? { "content-type": "application/json" } : {}), ...options.headers },
      },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => (text += chunk));
        response.on("end", () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, json: () => JSON.parse(text), text }),
        );
      },
    );
    outgoing.on("error", reject);
    outgoing.end(payload);
  });
}

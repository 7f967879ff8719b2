import { Agent, request } from "node:http";

export interface SocketAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** Whether the request went out on a connection an earlier request had used. */
  reusedSocket: boolean;
}

/**
 * Requests over one keep-alive connection at a time, as the official SDKs pool them: a request waits for the
 * previous one's connection when it is still open. Each request fails after `timeoutMs` rather than hang.
 */
export function keepAliveClient(base: string, timeoutMs = 10_000) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const send = (
    method: string,
    path: string,
    options: { headers?: Record<string, string>; body?: Buffer | string; chunks?: Buffer[] } = {},
  ): Promise<SocketAnswer> =>
    new Promise((resolve, reject) => {
      const outgoing = request(new URL(path, base), { method, agent, headers: options.headers }, (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => (text += chunk));
        response.on("end", () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            text,
            reusedSocket: outgoing.reusedSocket,
          }),
        );
      });
      outgoing.setTimeout(timeoutMs, () =>
        outgoing.destroy(new Error(`${method} ${path}: no answer in ${timeoutMs} ms`)),
      );
      // The server may answer and close before the whole body is written: that write error is not the answer's.
      outgoing.on("error", reject);
      for (const chunk of options.chunks ?? []) outgoing.write(chunk);
      outgoing.end(options.body);
    });
  return { send, close: () => agent.destroy() };
}

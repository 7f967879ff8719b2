import { listen, readBody, sendJson } from "../../cli/lib/json-http-server";

/** One span as a collector receives it over OTLP/HTTP JSON, its attributes flattened to plain values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean>;
  status?: { code?: number };
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  /** The resource's attributes (service.name...). */
  resource: Record<string, string | number | boolean>;
}

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
type KeyValue = { key: string; value: AnyValue };

function flat(attributes: KeyValue[] | undefined): Record<string, string | number | boolean> {
  const entries = (attributes ?? []).map(({ key, value }) => {
    const plain = value.stringValue ?? value.boolValue ?? value.doubleValue ?? Number(value.intValue);
    return [key, plain] as const;
  });
  return Object.fromEntries(entries);
}

/**
 * An OTLP/HTTP collector for tests: takes POST /v1/traces as JSON, keeps every span (and each export's raw body, to
 * look for what must never be exported) and answers as a collector does.
 */
export async function startOtlpReceiver() {
  const spans: ReceivedSpan[] = [];
  const bodies: string[] = [];
  const server = await listen(
    async (request, response) => {
      const body = (await readBody(request)).toString("utf8");
      if (request.method !== "POST" || request.url !== "/v1/traces") return sendJson(response, 404, {});
      bodies.push(body);
      const document = JSON.parse(body) as {
        resourceSpans: {
          resource?: { attributes?: KeyValue[] };
          scopeSpans: { spans: (Omit<ReceivedSpan, "attributes" | "resource"> & { attributes?: KeyValue[] })[] }[];
        }[];
      };
      for (const { resource, scopeSpans } of document.resourceSpans) {
        for (const { spans: batch } of scopeSpans) {
          for (const span of batch) {
            spans.push({ ...span, attributes: flat(span.attributes), resource: flat(resource?.attributes) });
          }
        }
      }
      sendJson(response, 200, { partialSuccess: {} });
    },
    0,
    "otlp receiver",
  );
  return {
    url: server.url,
    spans,
    /** Everything exported, as sent. */
    exported: () => bodies.join("\n"),
    stop: () => server.stop(),
  };
}

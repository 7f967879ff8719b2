import { describe, expect, it } from "vitest";
import { tracingSettings } from "./tracing";

function settings(env: Record<string, string>) {
  const problems: string[] = [];
  return { tracing: tracingSettings(env, problems), problems };
}

describe("tracing settings from the OTEL_* variables", () => {
  it("is off unless an exporter is named, and when the SDK is disabled or the exporter is none", () => {
    expect(settings({})).toEqual({ tracing: undefined, problems: [] });
    expect(settings({ OTEL_SERVICE_NAME: "x" }).tracing).toBeUndefined();
    expect(
      settings({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", OTEL_SDK_DISABLED: "true" }).tracing,
    ).toBeUndefined();
    expect(
      settings({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", OTEL_TRACES_EXPORTER: "none" }).tracing,
    ).toBeUndefined();
  });

  it("exports to the endpoint's /v1/traces, or to the traces endpoint as given, with the headers and resource", () => {
    const { tracing, problems } = settings({
      OTEL_EXPORTER_OTLP_ENDPOINT: "https://collector.example:4318/",
      OTEL_EXPORTER_OTLP_HEADERS: "x-api-key=abc%3D1, x-team=pay",
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=prod,service.name=ignored-beside-OTEL_SERVICE_NAME",
      OTEL_SERVICE_NAME: "paysvc-polygon",
    });
    expect(problems).toEqual([]);
    expect(tracing).toMatchObject({
      url: "https://collector.example:4318/v1/traces",
      headers: { "x-api-key": "abc=1", "x-team": "pay" },
      serviceName: "paysvc-polygon",
      resource: { "deployment.environment": "prod" },
      sampler: { kind: "parentbased_always_on", ratio: 1 },
      batchDelayMs: 5000,
    });
    expect(settings({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://localhost:9999/custom" }).tracing?.url).toBe(
      "http://localhost:9999/custom",
    );
    expect(settings({ OTEL_TRACES_EXPORTER: "otlp" }).tracing?.url).toBe("http://localhost:4318/v1/traces");
  });

  it("names each variable it cannot use", () => {
    const { problems } = settings({
      OTEL_TRACES_EXPORTER: "zipkin",
    });
    expect(problems).toEqual([expect.stringMatching(/^OTEL_TRACES_EXPORTER: zipkin is not supported/)]);
    const many = settings({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector.example:4318",
      OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
      OTEL_TRACES_SAMPLER: "sometimes",
      OTEL_BSP_SCHEDULE_DELAY: "soon",
    }).problems;
    expect(many).toEqual([
      expect.stringMatching(/^OTEL_EXPORTER_OTLP_PROTOCOL: grpc is not supported: .*http\/json/),
      expect.stringMatching(/^OTEL_EXPORTER_OTLP_ENDPOINT: .*plain http on a host that is not this machine/),
      expect.stringMatching(/^OTEL_BSP_SCHEDULE_DELAY: soon/),
      expect.stringMatching(/^OTEL_TRACES_SAMPLER: sometimes is not supported/),
    ]);
    expect(
      settings({ OTEL_TRACES_EXPORTER: "otlp", OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "2" })
        .problems,
    ).toEqual([expect.stringMatching(/^OTEL_TRACES_SAMPLER_ARG: 2 is not a ratio/)]);
  });
});

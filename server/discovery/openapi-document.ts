import { API_DESCRIPTION_VERSION } from "../../config/version";
import { paymentInfo, type DeploymentFacts } from "./deployment-facts";

const errorSchema = {
  type: "object",
  required: ["error"],
  properties: {
    error: {
      type: "object",
      required: ["message", "type", "code"],
      properties: {
        message: { type: "string" },
        type: { type: "string" },
        param: { type: ["string", "null"] },
        code: { type: "string" },
      },
    },
  },
};

const paymentRequiredSchema = {
  type: "object",
  description: "The decoded PAYMENT-REQUIRED header (the JSON body repeats it beside an OpenAI-shaped error)",
  required: ["x402Version", "resource", "accepts"],
  properties: {
    x402Version: { const: 2 },
    error: { type: "string" },
    resource: {
      type: "object",
      required: ["url"],
      properties: { url: { type: "string" }, description: { type: "string" } },
    },
    accepts: {
      type: "array",
      items: {
        type: "object",
        required: ["scheme", "network", "amount", "asset", "payTo", "maxTimeoutSeconds", "extra"],
        properties: {
          scheme: { const: "exact" },
          network: { type: "string" },
          amount: { type: "string", description: "atomic units of the asset" },
          asset: { type: "string" },
          payTo: { type: "string" },
          maxTimeoutSeconds: { type: "integer" },
          extra: { type: "object" },
        },
      },
    },
    extensions: {
      type: "object",
      properties: { quote: { type: "object", description: "display breakdown of the price" } },
    },
  },
};

const errorResponse = (description: string) => ({
  description,
  content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
});

/** OpenAPI 3.1 description of one deployment, version 1.0.0. */
export function openApiDocument(facts: DeploymentFacts): Record<string, unknown> {
  const payment = paymentInfo(facts);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const endpoint of facts.catalog) {
    const responses: Record<string, unknown> = {
      [endpoint.successStatus]: {
        description: endpoint.responseDescription,
        content: {
          "application/json": { schema: { type: "object" } },
          ...(endpoint.streaming ? { "text/event-stream": { schema: { type: "string" } } } : {}),
        },
      },
    };
    if (endpoint.requestSchema) responses[400] = errorResponse("Invalid request, named in error.param");
    if (endpoint.access === "x402") {
      responses[402] = {
        description: "Payment required, or the payment was refused (error.code says why); nothing was charged",
        headers: {
          "PAYMENT-REQUIRED": { description: "base64 of the JSON payment requirements", schema: { type: "string" } },
        },
        content: { "application/json": { schema: { $ref: "#/components/schemas/PaymentRequired" } } },
      };
      responses[502] = errorResponse("The upstream failed; the payment was not settled");
      responses[503] = errorResponse("The facilitator is unavailable; nothing was charged");
    }
    if (endpoint.access === "prepaid-bearer") responses[401] = errorResponse("Unknown or missing prepaid key");
    for (const [status, description] of Object.entries(endpoint.errors)) responses[status] = errorResponse(description);
    const operation: Record<string, unknown> = {
      operationId: endpoint.operationId,
      summary: endpoint.summary,
      responses,
    };
    if (endpoint.requestSchema) {
      operation.requestBody = {
        required: !endpoint.bodyOptional,
        content: {
          "application/json": {
            schema: endpoint.requestSchema,
            ...(endpoint.example ? { example: endpoint.example } : {}),
          },
        },
      };
    }
    if (endpoint.access === "x402") {
      operation.parameters = [
        {
          name: "PAYMENT-SIGNATURE",
          in: "header",
          required: false,
          description: "base64 of the JSON x402 payment payload",
          schema: { type: "string" },
        },
      ];
      operation["x-payment-info"] = { ...payment, pricing: endpoint.pricing };
    }
    if (endpoint.access === "prepaid-bearer") operation.security = [{ prepaidKey: [] }];
    paths[endpoint.path] = { ...paths[endpoint.path], [endpoint.method.toLowerCase()]: operation };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: `paysvc (${facts.network.id})`,
      version: API_DESCRIPTION_VERSION,
      description: `Pay-per-request model gateway. Paid endpoints answer 402 with the exact price; pay in USDC on ${facts.network.id} with x402 (exact scheme) and repeat the request with PAYMENT-SIGNATURE. Prepaid keys work as bearer tokens at ${facts.prepaidApiBase}.`,
    },
    servers: [{ url: facts.origin }],
    paths,
    components: {
      schemas: { Error: errorSchema, PaymentRequired: paymentRequiredSchema },
      securitySchemes: { prepaidKey: { type: "http", scheme: "bearer", description: "a prepaid key (paysvc_pk_...)" } },
    },
  };
}

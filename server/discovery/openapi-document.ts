import { paymentSchemes } from "../core/payment-scheme";
import { API_DESCRIPTION_VERSION } from "../../config/version";
import { mppSentence } from "./mpp-guide";
import { paymentInfo, schemesOf, type DeploymentFacts } from "./deployment-facts";

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
  description:
    "The decoded PAYMENT-REQUIRED header (x402 v2); on networks without an x402 v1 name the JSON body repeats it beside an OpenAI-shaped error",
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
          scheme: {
            enum: [...paymentSchemes],
            description:
              "exact: pay amount; upto (offered after exact for chat and Responses, where the deployment settles it): sign amount as a maximum, be charged the tokens used; batch-settlement (chat, Responses, images, decisions, where offered): a voucher from a channel you deposited into once, for at most amount more, charged as upto would be (images and decisions: amount)",
          },
          network: { type: "string" },
          amount: { type: "string", description: "atomic units of the asset (upto: the most that may be charged)" },
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

/** The 402's JSON body on networks with an x402 v1 name: what v1 clients (x402-fetch 1.x, x402-axios) read. */
const paymentRequiredV1Schema = {
  type: "object",
  description:
    "x402 v1 requirements (pay with X-PAYMENT, settlement in X-PAYMENT-RESPONSE), with the quote's breakdown and an OpenAI-shaped error; v2 clients read the PAYMENT-REQUIRED header instead",
  required: ["x402Version", "accepts", "error"],
  properties: {
    x402Version: { const: 1 },
    accepts: {
      type: "array",
      items: {
        type: "object",
        required: [
          "scheme",
          "network",
          "maxAmountRequired",
          "resource",
          "description",
          "mimeType",
          "payTo",
          "maxTimeoutSeconds",
          "asset",
          "extra",
        ],
        properties: {
          scheme: { const: "exact" },
          network: { type: "string", description: "the network's v1 name: polygon, base" },
          maxAmountRequired: { type: "string", description: "the exact amount, in atomic units of the asset" },
          resource: { type: "string" },
          description: { type: "string" },
          mimeType: { type: "string" },
          payTo: { type: "string" },
          maxTimeoutSeconds: { type: "integer" },
          asset: { type: "string" },
          extra: { type: "object" },
        },
      },
    },
    extensions: { type: "object" },
    error: errorSchema.properties.error,
  },
};

/** Headers of a paid or prepaid answer (docs/api.md, "What an answer cost"; docs/payments.md, "Safe retries"). */
const paidAnswerHeaders = {
  "PAYMENT-RESPONSE": {
    description: "x402: base64 of the JSON settlement (transaction, network, payer)",
    schema: { type: "string" },
  },
  "X-PAYMENT-RESPONSE": {
    description: "x402 v1 payments: the same settlement, where v1 clients read it",
    schema: { type: "string" },
  },
  "Payment-Receipt": {
    description: "MPP payments: base64url of the JSON receipt (method evm, reference: the transaction)",
    schema: { type: "string" },
  },
  "X-Paysvc-Cost": {
    description: "what the answer cost, USD as a decimal string (whole answers)",
    schema: { type: "string" },
  },
  "X-Paysvc-Prepaid-Remaining": {
    description: "prepaid key: tokens left after this call (whole answers)",
    schema: { type: "string" },
  },
  "X-Paysvc-Provider": {
    description: "the provider (a route of the operator's catalog) that served the answer",
    schema: { type: "string" },
  },
  "Idempotent-Replayed": {
    description:
      "true on an answer kept for a retry under its payment-identifier (charged once, for the first request)",
    schema: { type: "string" },
  },
};

const errorResponse = (description: string) => ({
  description,
  content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
});

/** OpenAPI 3.1 description of one deployment, version 1.0.0. */
export function openApiDocument(facts: DeploymentFacts): Record<string, unknown> {
  const payment = paymentInfo(facts);
  const v1Network = facts.network.kind === "evm" ? facts.network.x402V1Network : undefined;
  const bodySchema = v1Network ? "PaymentRequiredV1" : "PaymentRequired";
  const paths: Record<string, Record<string, unknown>> = {};
  for (const endpoint of facts.catalog) {
    const responses: Record<string, unknown> = {
      [endpoint.successStatus]: {
        description: endpoint.responseDescription,
        ...(endpoint.access === "free" ? {} : { headers: paidAnswerHeaders }),
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
          ...(facts.mpp
            ? {
                "WWW-Authenticate": {
                  description: "MPP: a Payment challenge (method evm, intent charge) for the same amount",
                  schema: { type: "string" },
                },
              }
            : {}),
        },
        content: { "application/json": { schema: { $ref: `#/components/schemas/${bodySchema}` } } },
      };
      responses[409] = errorResponse(
        "payment_identifier_conflict: the payment-identifier was used for another request; payment_identifier_busy: its request is still being answered (send it again shortly); nothing was charged",
      );
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
        ...(facts.mpp
          ? [
              {
                name: "Authorization",
                in: "header",
                required: false,
                description: "MPP: Payment <credential>, answering the 402's WWW-Authenticate challenge",
                schema: { type: "string" },
              },
            ]
          : []),
        ...(v1Network
          ? [
              {
                name: "X-PAYMENT",
                in: "header",
                required: false,
                description: `x402 v1: base64 of the JSON v1 payment payload (network ${v1Network}), for clients that read the 402's body`,
                schema: { type: "string" },
              },
            ]
          : []),
      ];
      operation["x-payment-info"] = { ...payment, schemes: schemesOf(facts, endpoint), pricing: endpoint.pricing };
    }
    if (endpoint.access === "prepaid-bearer") operation.security = [{ prepaidKey: [] }];
    paths[endpoint.path] = { ...paths[endpoint.path], [endpoint.method.toLowerCase()]: operation };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: `paysvc (${facts.network.id})`,
      version: API_DESCRIPTION_VERSION,
      description: `Pay-per-request model gateway. Paid endpoints answer 402 with the exact price; pay in USDC on ${facts.network.id} with x402 (exact scheme) and repeat the request with PAYMENT-SIGNATURE.${mppSentence(facts)} Prepaid keys work as bearer tokens at ${facts.prepaidApiBase}.`,
    },
    servers: [{ url: facts.origin }],
    paths,
    components: {
      schemas: {
        Error: errorSchema,
        PaymentRequired: paymentRequiredSchema,
        ...(v1Network ? { PaymentRequiredV1: paymentRequiredV1Schema } : {}),
      },
      securitySchemes: { prepaidKey: { type: "http", scheme: "bearer", description: "a prepaid key (paysvc_pk_...)" } },
    },
  };
}

import { isAddress } from "viem";
import { z } from "zod";
import { ConfigurationError } from "./env";

const address = z
  .string()
  .refine((value) => isAddress(value, { strict: true }), "must be an EVM address with a valid EIP-55 checksum");

const mcpSchema = z
  .object({
    PAYSVC_WALLET_PRIVATE_KEY: z
      .string()
      .regex(/^0x[0-9a-fA-F]{64}$/, "must be a 32-byte hex private key (0x + 64 hex digits)"),
    PAYSVC_ORIGIN: z
      .string()
      .url("must be the deployment's origin, such as https://pay.example")
      .transform((value) => value.replace(/\/+$/, "")),
    PAYSVC_PAY_TO: address.optional(),
    PAYSVC_PAY_TO_BY_NETWORK: z
      .string()
      .transform((value, context) => {
        try {
          return z.record(z.string(), address).parse(JSON.parse(value));
        } catch {
          context.addIssue({
            code: "custom",
            message: 'must be a JSON object of CAIP-2 id to address, e.g. {"eip155:8453":"0x..."}',
          });
          return z.NEVER;
        }
      })
      .optional(),
    PAYSVC_MAX_PAYMENT_USD: z.string().regex(/^\d+(\.\d{1,6})?$/, "must be a USD amount such as 0.50"),
  })
  .refine((values) => values.PAYSVC_PAY_TO || values.PAYSVC_PAY_TO_BY_NETWORK, {
    message: "set PAYSVC_PAY_TO (or PAYSVC_PAY_TO_BY_NETWORK) to the recipient you expect to pay",
    path: ["PAYSVC_PAY_TO"],
  });

export interface McpConfig {
  privateKey: `0x${string}`;
  origin: string;
  payToFor: (network: string) => string | undefined;
  maxPaymentUsd: string;
}

/** The MCP helper's configuration; messages name the variable, never its value (the key is a secret). */
export function loadMcpConfig(env: Record<string, string | undefined> = process.env): McpConfig {
  const result = mcpSchema.safeParse(
    Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== "")),
  );
  if (!result.success) {
    throw new ConfigurationError(
      result.error.issues.map((issue) => `${issue.path.join(".") || "config"}: ${issue.message}`),
    );
  }
  const values = result.data;
  return {
    privateKey: values.PAYSVC_WALLET_PRIVATE_KEY as `0x${string}`,
    origin: values.PAYSVC_ORIGIN,
    payToFor: (network) => values.PAYSVC_PAY_TO_BY_NETWORK?.[network] ?? values.PAYSVC_PAY_TO,
    maxPaymentUsd: values.PAYSVC_MAX_PAYMENT_USD,
  };
}

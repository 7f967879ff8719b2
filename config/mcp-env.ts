import { z } from "zod";
import { addressProblem, getNetwork, privateKeyProblem } from "../networks";
import { ConfigurationError } from "./env";

/** A recipient on any network (EVM with a valid checksum, or Solana base58); the paying client compares exactly. */
const address = z.string().superRefine((value, context) => {
  const problem = addressProblem(undefined, value);
  if (problem) context.addIssue({ code: "custom", message: problem });
});

const SOLANA = getNetwork("solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp");

/** Which chain family a wallet key belongs to, judged by its format; undefined when it is neither. */
function walletKind(key: string): "evm" | "svm" | undefined {
  if (key.startsWith("0x")) return privateKeyProblem(getNetwork("eip155:137"), key) ? undefined : "evm";
  return privateKeyProblem(SOLANA, key) ? undefined : "svm";
}

const mcpSchema = z
  .object({
    PAYSVC_WALLET_PRIVATE_KEY: z
      .string()
      .refine(
        (value) => walletKind(value) !== undefined,
        "must be a 32-byte hex private key (0x + 64 hex digits) for EVM networks, or a 64-byte Solana keypair in base58",
      ),
    PAYSVC_SOLANA_RPC_URL: z.string().url("must be the URL of a Solana JSON-RPC endpoint").optional(),
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
  /** An EVM key pays on EVM networks, a Solana keypair on Solana. */
  wallet: { kind: "evm"; privateKey: `0x${string}` } | { kind: "svm"; keypair: string; rpcUrl: string };
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
    wallet:
      walletKind(values.PAYSVC_WALLET_PRIVATE_KEY) === "evm"
        ? { kind: "evm", privateKey: values.PAYSVC_WALLET_PRIVATE_KEY as `0x${string}` }
        : {
            kind: "svm",
            keypair: values.PAYSVC_WALLET_PRIVATE_KEY,
            rpcUrl: values.PAYSVC_SOLANA_RPC_URL ?? SOLANA.defaultRpcUrl,
          },
    origin: values.PAYSVC_ORIGIN,
    payToFor: (network) => values.PAYSVC_PAY_TO_BY_NETWORK?.[network] ?? values.PAYSVC_PAY_TO,
    maxPaymentUsd: values.PAYSVC_MAX_PAYMENT_USD,
  };
}

import { offersMpp } from "../../server/mpp/mpp-method";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { addressProblem, getNetwork, networkIds } from "../../networks";
import type { DeploymentFacts } from "../../server/discovery/deployment-facts";
import { catalogOf } from "../../server/endpoints/endpoint-catalog";
import { endpointsFor } from "../../server/endpoints";
import type { ModelCatalog } from "../../config/catalog/model-catalog";

const httpUrl = z
  .string()
  .url("must be an absolute http(s) URL")
  .refine((value) => /^https?:\/\//.test(value), "must be an http(s) URL")
  .transform((value) => value.replace(/\/+$/, ""));
/** One deployment, as `paysvc config generate` writes it and the other commands read it. */
export const deploymentConfigSchema = z
  .object({
    network: z
      .string()
      .refine((value) => (networkIds as string[]).includes(value), `must be one of ${networkIds.join(", ")}`),
    origin: httpUrl,
    /** Account addresses: their format is the network's (EVM checksum, Solana base58). */
    payTo: z.string(),
    facilitatorUrl: httpUrl.optional(),
    asset: z.string().optional(),
    prepaidApiBase: httpUrl.optional(),
    paymentTimeoutSeconds: z.number().int().positive().default(300),
    /** Chat and Responses also take x402 `upto` (X402_UPTO), where the facilitator settles it. */
    upto: z.boolean().default(true),
    /** x402 `batch-settlement` channels are offered (the deployment has CHANNEL_AUTHORIZER_PRIVATE_KEY set). */
    channels: z.boolean().default(false),
  })
  .superRefine((config, context) => {
    if (!(networkIds as string[]).includes(config.network)) return;
    const network = getNetwork(config.network);
    for (const field of ["payTo", "asset"] as const) {
      const value = config[field];
      const problem = value === undefined ? undefined : addressProblem(network, value);
      if (problem) context.addIssue({ code: "custom", path: [field], message: problem });
    }
    if (config.asset !== undefined && network.kind === "svm" && config.asset !== network.usdc.address) {
      context.addIssue({
        code: "custom",
        path: ["asset"],
        message: `${network.id} uses the USDC mint ${network.usdc.address}`,
      });
    }
  });

export type DeploymentConfig = z.output<typeof deploymentConfigSchema>;

export function validateDeploymentConfig(value: unknown): DeploymentConfig {
  const result = deploymentConfigSchema.safeParse(value);
  if (result.success) {
    const network = getNetwork(result.data.network);
    if (network.usdc.addressFromConfiguration && !result.data.asset) {
      throw new Error(`asset: ${network.id} has no fixed USDC address; pass --asset <address>`);
    }
    return result.data;
  }
  const issue = result.error.issues[0];
  throw new Error(`${issue?.path.join(".") || "config"}: ${issue?.message}`);
}

export const fileNameFor = (network: string) => network.replace(/[^A-Za-z0-9]+/g, "-");

/** Writes `<network>.json` (read by the CLI) and `<network>.env` (the service's environment). */
export function writeDeploymentConfig(config: DeploymentConfig, directory: string): string[] {
  mkdirSync(directory, { recursive: true });
  const base = join(directory, fileNameFor(config.network));
  const environment = [
    `NETWORK=${config.network}`,
    `PUBLIC_BASE_URL=${config.origin}`,
    `PAY_TO=${config.payTo}`,
    ...(config.facilitatorUrl ? [`FACILITATOR_URL=${config.facilitatorUrl}`] : []),
    ...(config.asset ? [`USDC_ADDRESS=${config.asset}`] : []),
    ...(config.prepaidApiBase ? [`PREPAID_API_BASE=${config.prepaidApiBase}`] : []),
    `PAYMENT_TIMEOUT_SECONDS=${config.paymentTimeoutSeconds}`,
  ];
  writeFileSync(`${base}.json`, `${JSON.stringify(config, null, 2)}\n`);
  writeFileSync(`${base}.env`, `${environment.join("\n")}\n`);
  return [`${base}.json`, `${base}.env`];
}

/** Every deployment configured in `directory` (none when it does not exist). */
export function readDeploymentConfigs(directory: string): DeploymentConfig[] {
  if (!existsSync(directory)) return [];
  return readdirSync(directory)
    .filter((name) => name.endsWith(".json"))
    .map((name) => {
      try {
        return validateDeploymentConfig(JSON.parse(readFileSync(join(directory, name), "utf8")));
      } catch (error) {
        throw new Error(`${join(directory, name)}: ${(error as Error).message}`);
      }
    });
}

/** The deployment as its discovery documents describe it, with the catalog in force (PAYSVC_CATALOG). */
export function factsOf(config: DeploymentConfig, models: ModelCatalog): DeploymentFacts {
  return {
    origin: config.origin,
    network: getNetwork(config.network, config.asset),
    payTo: config.payTo,
    prepaidApiBase: config.prepaidApiBase ?? `${config.origin}/v1`,
    paymentTimeoutSeconds: config.paymentTimeoutSeconds,
    catalog: catalogOf(endpointsFor(models)),
    models,
    upto: config.upto && getNetwork(config.network).kind === "evm",
    channels: config.channels && getNetwork(config.network).kind === "evm",
    mpp: offersMpp(getNetwork(config.network)),
  };
}

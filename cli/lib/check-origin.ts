import type { ModelCatalog } from "../../config/catalog/model-catalog";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { getNetwork, sameAddress } from "../../networks";
import { quoteRequest } from "../../server/endpoints/quote-request";
import type { DeploymentConfig } from "./deployment-config";

export interface OriginCheck {
  origin: string;
  ok: boolean;
  checks: { name: string; ok: boolean; detail: string }[];
}

const SAMPLE_PATH = "/v1/chat/completions";
const sampleBody = (model: string) => ({
  model,
  messages: [{ role: "user", content: "paysvc health probe" }],
  max_tokens: 16,
});

async function fetchWithTimeout(url: string, init: RequestInit, timeoutMs: number): Promise<Response> {
  return fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
}

function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: string } }).cause?.code;
  return cause ?? (error as Error).message;
}

/**
 * The chat model the quote is asked for: the first the deployment lists in its own GET /v1/models that the local
 * catalog prices too (the quote is compared with the local price), else its first (the comparison then says the
 * local catalog lacks it). Throws what makes the list unusable.
 */
async function probedModel(origin: string, timeoutMs: number, models: ModelCatalog): Promise<string> {
  const response = await fetchWithTimeout(`${origin}/v1/models`, {}, timeoutMs);
  if (response.status !== 200) {
    await response.body?.cancel();
    throw new Error(`GET /v1/models answered ${response.status}`);
  }
  const list = (await response.json()) as { data?: { id?: unknown; type?: unknown }[] };
  const sold = (list.data ?? [])
    .filter((model) => model.type === "chat" && typeof model.id === "string")
    .map((model) => model.id as string);
  const priced = sold.find((id) => models.chat.some((model) => model.id === id));
  const probed = priced ?? sold[0];
  if (!probed) throw new Error("GET /v1/models lists no chat model");
  return probed;
}

/**
 * Checks one deployment: /health answers ok, the discovery manifest parses, and a 402 quote for a chat model the
 * deployment sells (from its /v1/models) names the expected network, asset and pay-to (from its configuration,
 * else from its own manifest) at the price the catalog (`models`) computes; the quote's detail names the model.
 * Never throws: every failure is a failed check that says what differs.
 */
/** What /health says of each facilitator. */
interface HealthChecks {
  facilitators?: Record<string, { status: string; breaker?: string; latency_ms?: number; error?: string }>;
}

export async function checkOrigin(
  origin: string,
  config: DeploymentConfig | undefined,
  timeoutMs: number,
  models: ModelCatalog,
): Promise<OriginCheck> {
  const checks: OriginCheck["checks"] = [];
  const record = (name: string, ok: boolean, detail: string) => checks.push({ name, ok, detail });

  try {
    const response = await fetchWithTimeout(`${origin}/health`, {}, timeoutMs);
    const body = (await response.json()) as { status?: string; network?: string; checks?: HealthChecks };
    record(
      "health",
      response.status === 200 && body.status === "ok",
      `${response.status} ${body.status ?? ""} ${body.network ?? ""}`.trim(),
    );
    // Each facilitator as the deployment asked it (/supported, with its credentials): one down is failover lost.
    for (const [name, state] of Object.entries(body.checks?.facilitators ?? {})) {
      const detail =
        state.status === "up"
          ? `up, breaker ${state.breaker}, ${state.latency_ms} ms`
          : `down: ${state.error ?? "no answer"}, breaker ${state.breaker}`;
      record(`facilitator ${name}`, state.status === "up", detail);
    }
  } catch (error) {
    record("health", false, `unreachable: ${describe(error)}`);
    return { origin, ok: false, checks };
  }

  let expected: { network: string; asset: string; payTo: string } | undefined;
  try {
    const response = await fetchWithTimeout(`${origin}/.well-known/x402`, {}, timeoutMs);
    const manifest = (await response.json()) as {
      version?: number;
      items?: { accepts?: { network: string; asset: string; payTo: string }[] }[];
    };
    const accepts = manifest.items?.[0]?.accepts?.[0];
    const parsed = manifest.version === 1 && accepts !== undefined;
    record(
      "discovery",
      parsed,
      parsed ? `${manifest.items?.length} paid resources` : "manifest lacks version 1 or items[].accepts",
    );
    expected = config
      ? { network: config.network, asset: config.asset ?? getNetwork(config.network).usdc.address, payTo: config.payTo }
      : accepts;
  } catch (error) {
    record("discovery", false, `not a JSON manifest: ${describe(error)}`);
    if (config)
      expected = {
        network: config.network,
        asset: config.asset ?? getNetwork(config.network).usdc.address,
        payTo: config.payTo,
      };
  }

  let model: string;
  try {
    model = await probedModel(origin, timeoutMs, models);
  } catch (error) {
    record("quote", false, `no chat model to quote: ${describe(error)}`);
    return { origin, ok: false, checks };
  }
  const body = JSON.stringify(sampleBody(model));
  try {
    const response = await fetchWithTimeout(
      `${origin}${SAMPLE_PATH}`,
      { method: "POST", headers: { "content-type": "application/json" }, body },
      timeoutMs,
    );
    await response.body?.cancel();
    const header = response.headers.get("payment-required");
    if (response.status !== 402 || !header) {
      record("quote", false, `${model}: expected a 402 with PAYMENT-REQUIRED, got ${response.status}`);
    } else {
      const accepts = decodePaymentRequiredHeader(header).accepts[0];
      const differences: string[] = [];
      if (!accepts) differences.push("no accepts");
      else if (expected) {
        for (const field of ["network", "asset", "payTo"] as const) {
          if (!sameAddress(accepts[field], expected[field]))
            differences.push(`${field} is ${accepts[field]}, expected ${expected[field]}`);
        }
        const network = getNetwork(accepts.network);
        if (!models.chat.some((known) => known.id === model)) {
          differences.push("not in the local catalog (run with the deployment's PAYSVC_CATALOG)");
        } else {
          const local = (await quoteRequest(SAMPLE_PATH, body, network, models)).amount;
          const quoted = BigInt(accepts.amount);
          // Live gas makes the quote larger than the tables alone, never smaller.
          if (network.settlementGas ? quoted < local : quoted !== local)
            differences.push(`amount is ${quoted}, the price tables give ${local}`);
        }
      }
      record(
        "quote",
        differences.length === 0,
        `${model}: ${differences.join("; ") || `${accepts?.amount} atomic on ${accepts?.network}`}`,
      );
    }
  } catch (error) {
    record("quote", false, `${model}: no quote: ${describe(error)}`);
  }
  return { origin, ok: checks.every((check) => check.ok), checks };
}

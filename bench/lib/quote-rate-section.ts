import { cpuMs } from "./process-cpu";
import { sustainedRate } from "./sustained-rate";
import { ms } from "./stats";

/**
 * The benchmark's section 3: unpaid chat completions (each answered 402) against GET /v1/models of the same app,
 * 16 connections. Driven by autocannon, not fetch: fetch cost the client more per 402 answer (0.5-0.6 ms, a 3 KB
 * header and body to parse) than the app spent on it, so the ratio measured the client. Blocks of each route
 * alternate, `rounds` of them after one that warms both up. The line to print.
 */
export async function quoteRateSection(options: {
  appUrl: string;
  appPid: number;
  body: string;
  seconds: number;
  rounds: number;
}): Promise<string> {
  const { appUrl, appPid, seconds } = options;
  const quotes = {
    url: `${appUrl}/v1/chat/completions`,
    method: "POST" as const,
    headers: { "content-type": "application/json" },
    body: options.body,
    status: 402,
  };
  const models = { url: `${appUrl}/v1/models`, status: 200 };
  const rates = { quotes: [] as number[], models: [] as number[] };
  const cpu = { quotes: [] as number[], models: [] as number[] };
  for (let round = 0; round <= options.rounds; round++) {
    for (const [name, route] of [
      ["quotes", quotes],
      ["models", models],
    ] as const) {
      const cpuBefore = cpuMs(appPid);
      const { perSecond, answered } = await sustainedRate({ ...route, connections: 16, seconds });
      // The first round warms both routes up.
      if (round === 0) continue;
      rates[name].push(perSecond);
      cpu[name].push((cpuMs(appPid) - cpuBefore) / answered);
    }
  }
  const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
  return `402 quotes ${mean(rates.quotes).toFixed(0)}/s, /v1/models ${mean(rates.models).toFixed(0)}/s, ratio ${(mean(rates.quotes) / mean(rates.models)).toFixed(2)}; app server CPU per request: quote ${ms(mean(cpu.quotes))}, /v1/models ${ms(mean(cpu.models))}`;
}

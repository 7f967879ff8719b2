import { readFileSync } from "node:fs";
import { ConfigurationError, type Environment } from "../configuration-error";
import { isServiceSecret } from "../host-urls";
import { catalogFileSchema, type CatalogEntry, type CatalogFileRoute } from "./catalog-file";
import {
  DEFAULT_CONTEXT_TOKENS,
  DEFAULT_MAX_OUTPUT_TOKENS,
  defaultCatalog,
  type DefaultRoutes,
} from "./default-catalog";
import { catalogModels, type CatalogKind, type ModelCatalog, type Route } from "./model-catalog";

export interface CatalogSource {
  /** PAYSVC_CATALOG: the operator's file; undefined: the spec's tables. */
  file: string | undefined;
  /** Where the default catalog's models are served (UPSTREAM_BASE_URL and its kin). */
  defaultRoutes: DefaultRoutes;
  /** What the routes' api_key_env variables are read from. */
  environment: Environment;
  /**
   * A serving process needs a route for every model and every route's key; `paysvc quote` and the discovery
   * documents read the prices alone.
   */
  serving: boolean;
}

const at = (path: readonly PropertyKey[]) =>
  path.reduce<string>(
    (text, key) => (typeof key === "number" ? `${text}[${key}]` : `${text}${text ? "." : ""}${String(key)}`),
    "",
  );

/** The catalog in force: the spec's tables, replaced or extended by the operator's file; refused with every problem. */
export function loadCatalog(source: CatalogSource): ModelCatalog {
  const { file } = source;
  const catalog = file === undefined ? defaultCatalog(source.defaultRoutes) : fromFile({ ...source, file });
  if (source.serving) requireRoutes(catalog, source.file);
  return catalog;
}

function fromFile(source: CatalogSource & { file: string }): ModelCatalog {
  const { file } = source;
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new ConfigurationError([
      `PAYSVC_CATALOG: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); set it to the catalog's JSON file`,
    ]);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ConfigurationError([`${file}: not valid JSON (${(error as Error).message}); fix the file`]);
  }
  const parsed = catalogFileSchema.safeParse(value);
  if (!parsed.success) {
    throw new ConfigurationError(
      parsed.error.issues.map((issue) => `${file}: ${at(issue.path) || "(top level)"}: ${issue.message}`),
    );
  }
  const { models } = parsed.data;
  const problems = [
    ...duplicateIds(models),
    ...kindCounts(models, parsed.data.extends === "default"),
    ...providerUrls(models, parsed.data.extends === "default" ? source.defaultRoutes : {}),
    ...ownSecretKeys(models),
    ...(source.serving ? unsetKeys(models, source.environment) : []),
  ].map((problem) => `${file}: ${problem}`);
  if (problems.length > 0) throw new ConfigurationError(problems);
  const base = parsed.data.extends === "default" ? defaultCatalog(source.defaultRoutes) : undefined;
  const catalog = merged(base, models, source.environment);
  const shared = [...idsOfTwoKinds(catalog, models), ...aliasClashes(catalog)].map((problem) => `${file}: ${problem}`);
  if (shared.length > 0) throw new ConfigurationError(shared);
  return catalog;
}

/**
 * Routes (and the models' own lookups) go by id across kinds, so an id names one model of the catalog in force:
 * an entry that took the id of a default model of another kind would have one served by the other's providers.
 */
function idsOfTwoKinds(catalog: ModelCatalog, models: readonly CatalogEntry[]): string[] {
  const kinds = new Map<string, CatalogKind[]>();
  for (const { kind, model } of catalogModels(catalog)) kinds.set(model.id, [...(kinds.get(model.id) ?? []), kind]);
  const where = (id: string, kind: CatalogKind) => {
    const index = models.findIndex((model) => model.id === id && model.kind === kind);
    return index >= 0 ? `models[${index}]` : "the spec's tables";
  };
  return [...kinds].flatMap(([id, [first, second]]) => {
    if (!first || !second) return [];
    const index = models.findIndex((model) => model.id === id);
    return [
      `models[${index}].id: "${id}" is the id of the ${first} model (${where(id, first)}) and of the ${second} model (${where(id, second)}); routes go by id, so one would be served by the other's providers: give each an id of its own`,
    ];
  });
}

/** An alias names one model, and never one that is sold under that id: a caller naming it gets what it names. */
function aliasClashes(catalog: ModelCatalog): string[] {
  const ids = new Set(catalogModels(catalog).map(({ model }) => model.id));
  const owner = new Map<string, string>();
  return catalog.chat.flatMap((model) =>
    (model.aliases ?? []).flatMap((alias) => {
      if (ids.has(alias)) {
        return [`aliases: "${alias}" of ${model.id} is the id of a model of the catalog; an alias names another name`];
      }
      const first = owner.get(alias);
      owner.set(alias, first ?? model.id);
      if (first === undefined) return [];
      return [
        first === model.id
          ? `aliases: "${alias}" is listed twice for ${model.id}; list it once`
          : `aliases: "${alias}" is an alias of ${first} and of ${model.id}; an alias names one model`,
      ];
    }),
  );
}

function duplicateIds(models: readonly CatalogEntry[]): string[] {
  const first = new Map<string, number>();
  return models.flatMap((model, index) => {
    const earlier = first.get(model.id);
    if (earlier === undefined) {
      first.set(model.id, index);
      return [];
    }
    return [`models[${index}].id: "${model.id}" is already listed at models[${earlier}]; list each model once`];
  });
}

/** Decisions, embeddings and the free chat each have one endpoint serving one model; chat needs at least one. */
function kindCounts(models: readonly CatalogEntry[], extendsDefault: boolean): string[] {
  const problems: string[] = [];
  for (const kind of ["decision", "embeddings", "free_chat"] as const) {
    const count = models.filter((model) => model.kind === kind).length;
    if (count > 1) problems.push(`models: ${count} entries of kind ${kind}; its endpoint serves one model, list one`);
    if (count === 0 && !extendsDefault) {
      problems.push(`models: no entry of kind ${kind}; add one, or add "extends": "default" to keep the spec's`);
    }
  }
  if (!extendsDefault && !models.some((model) => model.kind === "chat")) {
    problems.push(`models: no entry of kind chat; add one, or add "extends": "default" to keep the spec's`);
  }
  return problems;
}

function routesOf(models: readonly CatalogEntry[]) {
  return models.flatMap((model, index) =>
    model.routes.map((route, routeIndex) => ({ route, where: `models[${index}].routes[${routeIndex}]` })),
  );
}

/**
 * One provider, one base URL: its circuit breaker and its health are the provider's. Extending the spec's tables,
 * the names of their providers (`upstream` at UPSTREAM_BASE_URL, and its kin) are taken too.
 */
function providerUrls(models: readonly CatalogEntry[], taken: DefaultRoutes): string[] {
  const first = new Map<string, { url: string; where: string }>(
    Object.values(taken).flatMap((route) =>
      route ? [[route.provider, { url: route.baseUrl, where: "the spec's tables" }] as const] : [],
    ),
  );
  return routesOf(models).flatMap(({ route, where }) => {
    const known = first.get(route.provider);
    if (!known) first.set(route.provider, { url: route.base_url, where });
    if (!known || known.url === route.base_url) return [];
    return [
      `${where}.base_url: provider "${route.provider}" is at ${known.url} in ${known.where}; give each base URL a provider name of its own`,
    ];
  });
}

/** A route's key goes to its provider: one of the service's own secrets there would leave its host. */
function ownSecretKeys(models: readonly CatalogEntry[]): string[] {
  return routesOf(models).flatMap(({ route, where }) =>
    route.api_key_env && isServiceSecret(route.api_key_env)
      ? [
          `${where}.api_key_env: ${route.api_key_env} is one of this service's own secrets, and a route's key is sent to its provider; name the variable that holds the provider's API key`,
        ]
      : [],
  );
}

function unsetKeys(models: readonly CatalogEntry[], environment: Environment): string[] {
  return routesOf(models).flatMap(({ route, where }) =>
    route.api_key_env && !environment[route.api_key_env]?.trim()
      ? [
          `${where}.api_key_env: ${route.api_key_env} is not set; set it in the environment (or leave api_key_env out for a provider that takes no key)`,
        ]
      : [],
  );
}

function toRoute(route: CatalogFileRoute, environment: Environment): Route {
  return {
    provider: route.provider,
    baseUrl: route.base_url,
    apiKeyVariable: route.api_key_env,
    apiKey: route.api_key_env ? environment[route.api_key_env]?.trim() || undefined : undefined,
    model: route.model,
    headers: route.headers ?? {},
    ...(route.api && route.api !== "chat" ? { api: route.api } : {}),
  };
}

/** The file's entries over the base (the spec's tables, or nothing): same id replaces, a new id is added. */
function merged(base: ModelCatalog | undefined, models: readonly CatalogEntry[], environment: Environment) {
  const of = <K extends CatalogEntry["kind"]>(kind: K) =>
    models.filter((model): model is Extract<CatalogEntry, { kind: K }> => model.kind === kind);
  const routes = (model: CatalogEntry) => model.routes.map((route) => toRoute(route, environment));
  const over = <T extends { id: string }>(defaults: readonly T[], entries: T[]): T[] => [
    ...defaults.map((model) => entries.find((entry) => entry.id === model.id) ?? model),
    ...entries.filter((entry) => !defaults.some((model) => model.id === entry.id)),
  ];
  const chat = of("chat").map((model) => ({
    id: model.id,
    inputUsdPerMillion: model.prices.input_per_1m,
    outputUsdPerMillion: model.prices.output_per_1m,
    contextTokens: model.limits?.context_tokens ?? DEFAULT_CONTEXT_TOKENS,
    maxOutputTokens: model.limits?.max_output_tokens ?? DEFAULT_MAX_OUTPUT_TOKENS,
    ...(model.aliases?.length ? { aliases: model.aliases } : {}),
    ...(model.rate_limits ? { rateLimits: model.rate_limits } : {}),
    ...(model.vision ? { vision: model.vision } : {}),
    routes: routes(model),
  }));
  const images = of("image").map((model) => ({
    id: model.id,
    sizes: model.limits.sizes,
    usdPerImage: model.prices.per_image,
    routes: routes(model),
  }));
  const [decision] = of("decision");
  const [embeddings] = of("embeddings");
  const [freeChat] = of("free_chat");
  const single = (model: CatalogEntry | undefined) => model && { id: model.id, routes: routes(model) };
  return {
    chat: over(base?.chat ?? [], chat),
    images: over(base?.images ?? [], images),
    decision: decision
      ? {
          id: decision.id,
          inputUsdPerMillion: decision.prices.input_per_1m,
          outputUsdPerMillion: "0" as const,
          routes: routes(decision),
        }
      : base!.decision,
    embeddings: single(embeddings) ?? base!.embeddings,
    freeChat: single(freeChat) ?? base!.freeChat,
  };
}

/** A serving process refuses a model nobody serves: the default ones need UPSTREAM_BASE_URL. */
function requireRoutes(catalog: ModelCatalog, file: string | undefined): void {
  const unrouted = catalogModels(catalog)
    .filter(({ model }) => model.routes.length === 0)
    .map(({ model }) => model.id);
  if (unrouted.length === 0) return;
  const fix = file ? `, or give them routes in ${file}` : " (or give them routes in a catalog file, PAYSVC_CATALOG)";
  throw new ConfigurationError([
    `UPSTREAM_BASE_URL: required: no provider serves ${unrouted.join(", ")}; set the OpenAI-compatible provider's base URL${fix}`,
  ]);
}

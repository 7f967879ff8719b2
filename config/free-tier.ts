/** A per-caller window of a free endpoint: its name in answers, how many requests it admits, and its length. */
export interface FreeWindow {
  name: string;
  limit: number;
  durationMs: number;
}

const TEN_MINUTES_MS = 10 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

/** The free endpoints' limits; their models and providers are the catalog's (config/catalog). */
export const freeChat = {
  maxTokens: 2048,
  /**
   * Input a free request may carry, counted like a paid quote (messages, tools, response format). A conversation
   * of several pages fits; whole documents are for the paid endpoint, where input is priced. With the output cap,
   * one free request costs the operator at most about 10,000 tokens.
   */
  maxInputTokens: 8192,
  /**
   * Largest free chat body read. Text within the input limit is tens of kilobytes (about 100 KB with every
   * character \u-escaped); refused bodies are not counted against the caller, so anything far bigger is refused
   * before it costs a tokenizer pass, which over the general 24 MiB cap takes about half a second.
   */
  maxBodyBytes: 1024 * 1024,
  // The spec's: 10 per 10 minutes and 100 per day, per caller.
  windows: [
    { name: "per10Min", limit: 10, durationMs: TEN_MINUTES_MS },
    { name: "perDay", limit: 100, durationMs: DAY_MS },
  ] as readonly FreeWindow[],
} as const;

export const embeddings = {
  minInputs: 1,
  maxInputs: 128,
  inputTypes: ["query", "passage"],
  encodingFormats: ["float", "base64"],
  /**
   * Largest body read. The input token cap (FREE_EMBEDDINGS_MAX_INPUT_TOKENS, 16,384 by default) is tens to a few
   * hundred kilobytes of text, \u-escaped; anything far bigger is refused before it costs a tokenizer pass.
   */
  maxBodyBytes: 1024 * 1024,
} as const;

/** The free embeddings' bounds, from the environment (env.ts): per-caller windows and input tokens per request. */
export interface FreeEmbeddingsSettings {
  /** The windows in force; a window set to 0 is off, and with none the endpoint is not limited per caller. */
  windows: FreeWindow[];
  /** Input tokens one request may carry, all its strings together. */
  maxInputTokens: number;
}

export function freeEmbeddingsSettings(values: {
  FREE_EMBEDDINGS_PER_10_MIN: number;
  FREE_EMBEDDINGS_PER_DAY: number;
  FREE_EMBEDDINGS_MAX_INPUT_TOKENS: number;
}): FreeEmbeddingsSettings {
  const windows = [
    { name: "per10Min", limit: values.FREE_EMBEDDINGS_PER_10_MIN, durationMs: TEN_MINUTES_MS },
    { name: "perDay", limit: values.FREE_EMBEDDINGS_PER_DAY, durationMs: DAY_MS },
  ];
  return {
    windows: windows.filter((window) => window.limit > 0),
    maxInputTokens: values.FREE_EMBEDDINGS_MAX_INPUT_TOKENS,
  };
}

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
  windows: [
    { name: "per10Min", limit: 10, durationMs: 10 * 60 * 1000 },
    { name: "perDay", limit: 100, durationMs: 24 * 60 * 60 * 1000 },
  ],
} as const;

export const embeddings = {
  minInputs: 1,
  maxInputs: 128,
  inputTypes: ["query", "passage"],
  encodingFormats: ["float", "base64"],
} as const;

/** The free endpoints' models and limits. */
export const freeChat = {
  model: "vendor-b/gpt-oss-20b",
  maxTokens: 2048,
  windows: [
    { name: "per10Min", limit: 10, durationMs: 10 * 60 * 1000 },
    { name: "perDay", limit: 100, durationMs: 24 * 60 * 60 * 1000 },
  ],
} as const;

export const embeddings = {
  model: "vendor-b/nemotron-3-embed-1b",
  minInputs: 1,
  maxInputs: 128,
  inputTypes: ["query", "passage"],
  encodingFormats: ["float", "base64"],
} as const;

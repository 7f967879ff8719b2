import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { defaultCatalog } from "../../config/catalog/default-catalog";
import { codexShapedBody } from "../../bench/lib/dialect-section";
import { quickCheckPasses } from "./responses-quick-check";
import { parseResponsesRequest, responsesRequestSchema } from "./responses-request";

/** The one request `codex exec` sent (e2e/__fixtures__/agents/README.md). */
const recorded = (
  JSON.parse(readFileSync("e2e/__fixtures__/agents/codex-responses-request.json", "utf8")) as {
    body: Record<string, unknown>;
  }[]
)[0]!.body;

/** Every kind of item and field the quick check reads, and tools and a tool choice with keys out of order. */
const everything = {
  ...recorded,
  input: [
    ...(recorded.input as unknown[]),
    { role: "user", content: [{ text: "untyped", type: "input_text", extra: 1 }] },
    { type: "message", role: "assistant", content: "said" },
    { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "gAAA..." },
    { type: "custom_tool_call", call_id: "call_1", name: "exec", input: "text('hi')" },
    { type: "custom_tool_call_output", call_id: "call_1", output: [{ type: "input_text", text: "hi" }] },
    { type: "function_call", call_id: "call_2", name: "wait", arguments: '{"cell_id":"1"}' },
    { type: "function_call_output", call_id: "call_2", output: "done" },
  ],
  instructions: "Be brief.",
  max_output_tokens: 512,
  temperature: 0.5,
  top_p: 1,
  metadata: { b: "1", a: "2" },
  user: "someone",
  truncation: "auto",
  safety_identifier: "s",
  prompt_cache_retention: "24h",
  text: { verbosity: "low", format: { name: "out", type: "json_schema", schema: { type: "object" } } },
  tools: [
    { parameters: { type: "object" }, name: "run", type: "function", strict: true, extra: 1 },
    { name: "apply_patch", type: "custom" },
    { tools: [{ name: "inner", type: "function" }], name: "ns", type: "namespace" },
    { external_web_access: false, type: "web_search" },
  ],
  tool_choice: { name: "run", type: "function" },
};

const bodies = {
  recorded,
  everything,
  bench: codexShapedBody(true),
  plain: { model: "vendor-a/gpt-6-luna", input: "hi" },
};

/** Values put in place of each one of a body, to find any the quick check passes and the schema refuses. */
const REPLACEMENTS: unknown[] = [
  undefined,
  null,
  0,
  -1,
  1.5,
  2.5,
  1e300,
  "",
  "x",
  "not a name!",
  "x".repeat(65),
  "message",
  "reasoning",
  "input_text",
  true,
  [],
  [{}],
  {},
  { type: "function" },
  { type: "unknown_type" },
];

/** Each body with one value (at any depth) replaced or removed. */
function* mutations(value: unknown): Generator<unknown> {
  if (typeof value !== "object" || value === null) return;
  const entries = Array.isArray(value) ? value.map((entry, index) => [index, entry] as const) : Object.entries(value);
  for (const [key, inner] of entries) {
    const withValue = (replacement: unknown) => {
      if (Array.isArray(value)) return value.map((entry, index) => (index === key ? replacement : entry));
      return { ...value, [key]: replacement };
    };
    for (const replacement of REPLACEMENTS) yield withValue(replacement);
    if (!Array.isArray(value)) {
      const { [key]: _removed, ...rest } = value as Record<string, unknown>;
      yield rest;
    }
    for (const deeper of mutations(inner)) yield withValue(deeper);
  }
}

describe("the quick check of a Responses body", () => {
  it("passes the bodies clients send, parsed as the schema parses them (tools and tool choice in its key order)", () => {
    for (const body of Object.values(bodies)) {
      expect(quickCheckPasses(body)).toBe(true);
      const parsed = parseResponsesRequest(body, defaultCatalog()).body;
      const schema = responsesRequestSchema.parse(body);
      expect(parsed).toEqual(schema);
      expect(JSON.stringify(parsed.tools)).toBe(JSON.stringify(schema.tools));
      expect(JSON.stringify(parsed.tool_choice)).toBe(JSON.stringify(schema.tool_choice));
    }
  });

  it("never passes a body the schema refuses, whatever one value of it is changed to or removed", () => {
    let passed = 0;
    let refused = 0;
    for (const body of Object.values(bodies)) {
      for (const mutated of mutations(body)) {
        if (!quickCheckPasses(mutated as Record<string, unknown>)) continue;
        const { tools: _tools, tool_choice: _choice, ...checked } = mutated as Record<string, unknown>;
        const result = responsesRequestSchema.safeParse({ ...checked, tools: undefined, tool_choice: undefined });
        if (!result.success) refused++;
        else passed++;
      }
    }
    expect(refused).toBe(0);
    expect(passed).toBeGreaterThan(100);
  });

  it("leaves to the schema, and its words, a body it does not know", () => {
    const odd = { model: "vendor-a/gpt-6-luna", input: [{ type: "message", role: "critic", content: "hi" }] };
    expect(quickCheckPasses(odd)).toBe(false);
    expect(() => parseResponsesRequest(odd, defaultCatalog())).toThrow(
      "Invalid 'input[0].role': must be one of user, assistant, system, developer",
    );
  });
});

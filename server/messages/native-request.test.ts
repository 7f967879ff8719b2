import { describe, expect, it } from "vitest";
import { defaultCatalog } from "../../config/catalog/default-catalog";
import { parseMessagesRequest } from "./messages-request";
import { nativeRequestBody } from "./native-request";

const parse = (extra: object) =>
  parseMessagesRequest(
    { model: "vendor-a/gpt-6-luna", max_tokens: 300, messages: [{ role: "user", content: "hi" }], ...extra },
    defaultCatalog(),
  );

describe("nativeRequestBody", () => {
  it("passes the request as it came, fields chat cannot honour included, with the route's model and the cap", () => {
    const parsed = parse({
      thinking: { type: "adaptive" },
      context_management: { edits: [] },
      output_config: { effort: "high" },
      metadata: { user_id: "u" },
      top_k: 3,
      stream: true,
    });
    parsed.maxOutputTokens = 200;
    expect(nativeRequestBody(parsed, "claude-provider-id")).toEqual({
      ...parsed.body,
      model: "claude-provider-id",
      max_tokens: 200,
    });
  });

  it("sends none of the beta fields about the caller's own Anthropic account or remote MCP servers", () => {
    const body = nativeRequestBody(
      parse({ betas: ["x"], workspace_id: "w", mcp_servers: [], compaction: { a: 1 } }),
      "p",
    );
    expect(Object.keys(body)).not.toContain("betas");
    expect(Object.keys(body)).not.toContain("workspace_id");
    expect(Object.keys(body)).not.toContain("mcp_servers");
    expect(body.compaction).toEqual({ a: 1 });
  });

  it("strips every prompt-cache hint, so input is billed uncached as quoted, and leaves the parsed body as it was", () => {
    const parsed = parse({
      cache_control: { type: "ephemeral" },
      system: [{ type: "text", text: "s", cache_control: { type: "ephemeral", ttl: "1h" } }],
      messages: [{ role: "user", content: [{ type: "text", text: "hi", cache_control: { type: "ephemeral" } }] }],
      tools: [{ name: "f", input_schema: { type: "object" }, cache_control: { type: "ephemeral" } }],
    });
    const body = nativeRequestBody(parsed, "p");
    expect(JSON.stringify(body)).not.toContain("cache_control");
    expect(body.system).toEqual([{ type: "text", text: "s" }]);
    expect(JSON.stringify(parsed.body)).toContain("cache_control");
  });

  it("sends tools the caller runs, never the provider's own (billed per use), and fixes a choice left without its tool", () => {
    const custom = { name: "f", input_schema: { type: "object" } };
    const bash = { type: "bash_20250124", name: "bash" };
    const search = { type: "web_search_20250305", name: "web_search" };
    const kept = nativeRequestBody(
      parse({ tools: [custom, bash, search], tool_choice: { type: "tool", name: "web_search" } }),
      "p",
    );
    expect(kept.tools).toEqual([custom, bash]);
    expect(kept.tool_choice).toEqual({ type: "auto" });
    const none = nativeRequestBody(parse({ tools: [search], tool_choice: { type: "any" } }), "p");
    expect(none).not.toHaveProperty("tools");
    expect(none).not.toHaveProperty("tool_choice");
  });
});

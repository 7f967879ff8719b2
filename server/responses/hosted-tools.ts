/**
 * Hosted tools (web_search, file_search, code_interpreter, image_generation, mcp, computer use...) run at the
 * provider and are billed per use, beyond the tokens a quote prices: they are never sent on, neither translated to
 * chat nor passed to a route that speaks Responses natively. A request naming one is still answered, without it.
 */
export const HOSTED_TOOL_CHARGE = "hosted tools are billed per use, beyond the tokens priced";

/** Whether a Responses tool is a hosted one: any type but function, custom and namespace. */
export function isHostedTool(tool: unknown): boolean {
  if (typeof tool !== "object" || tool === null) return false;
  const { type } = tool as { type?: unknown };
  return type !== "function" && type !== "custom" && type !== "namespace";
}

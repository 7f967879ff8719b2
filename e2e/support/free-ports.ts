/** Every port of a stack set to 0, so each piece binds a free one: stacks of several tests never collide. */
export const FREE_PORTS = {
  PORT: "0",
  LOCAL_CHAIN_PORT: "0",
  LOCAL_FACILITATOR_PORT: "0",
  LOCAL_UPSTREAM_PORT: "0",
  LOCAL_POSTGRES_PORT: "0",
} as const;

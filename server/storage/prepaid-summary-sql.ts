/**
 * The prepaid summary's one statement, the same on both engines (PrepaidKeyStore.summary): `since` is the engine's
 * parameter for the time, `number` how the engine turns a sum into a number.
 */
export function prepaidSummarySql(since: string, number: (sum: string) => string): string {
  const sold = `created_at >= ${since} and status in ('active', 'disabled')`;
  return `select
      ${number(`coalesce(sum(case when ${sold} then 1 else 0 end), 0)`)} as "keysSold",
      ${number(`coalesce(sum(case when ${sold} then total_tokens else 0 end), 0)`)} as "tokensSold",
      ${number(`coalesce(sum(case when status = 'active' then 1 else 0 end), 0)`)} as "activeKeys",
      ${number(`coalesce(sum(case when status = 'active' then total_tokens - used_tokens else 0 end), 0)`)}
        as "tokensOutstanding"
    from prepaid_keys`;
}

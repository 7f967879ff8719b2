/**
 * The statements of the rate limits' one row per subject, the same on both engines but for how each writes a
 * parameter (`param`, called as each statement is written: each is a function) and the larger of two numbers (`larger`: SQLite's max, PostgreSQL's greatest).
 *
 * Admission is one upsert: a new subject's row is written as admitting its first call (its values computed by the
 * caller, `first*`); an existing row is moved on only if every limit has room, judged on its own values:
 * - the request clock `requests_at` (ms) is moved on by `requestMs` per call, never past now + window;
 * - the token clock `tokens_at` by `tokensMs` (the call's tokens x ms per token), never past now + window;
 * - `running` counts calls under the subject's lease `lease_until`; a lapsed lease (no running call renewed it)
 *   starts the count again in a new `epoch`, so that ends of the old epoch's calls do not take from the new count.
 * The clock hour's calls and refusals are kept beside, for the operator's page.
 */
export function rateLimitSql(param: (name: string) => string, larger: string) {
  const p = param;
  const row = "rate_limits";
  const take = () => {
    const requestsAt = `${larger}(${row}.requests_at, ${p("now")})`;
    const tokensAt = `${larger}(${row}.tokens_at, ${p("now")})`;
    const live = `${row}.lease_until > ${p("now")}`;
    const running = `(case when ${live} then ${row}.running else 0 end)`;
    // A microsecond of slack: a minute's worth of steps of 60000 / 7 ms adds up to a hair over 60000 in floating point.
    const within = `${p("windowMs")} + 0.001`;
    const room = `((${p("requestMs")} = 0 or ${requestsAt} + ${p("requestMs")} - ${p("now")} <= ${within})
        and (${p("msPerToken")} = 0 or ${tokensAt} + ${p("tokensMs")} - ${p("now")} <= ${within})
        and (${p("concurrent")} = 0 or ${running} + 1 <= ${p("concurrent")}))`;
    const sameHour = `${row}.hour = ${p("hour")}`;
    const lastHour = `${row}.hour = ${p("hour")} - 1`;
    return `insert into rate_limits (subject, requests_at, tokens_at, running, lease_until, epoch, admitted, hour,
      hour_calls, hour_refusals, prev_calls, prev_refusals)
    values (${p("subject")}, ${p("firstRequestsAt")}, ${p("firstTokensAt")}, ${p("firstRunning")}, ${p("leaseUntil")}, 0,
      ${p("firstAdmitted")}, ${p("hour")}, ${p("firstAdmitted")}, 1 - ${p("firstAdmitted")}, 0, 0)
    on conflict (subject) do update set
      requests_at = case when ${room} then ${requestsAt} + ${p("requestMs")} else ${row}.requests_at end,
      tokens_at = case when ${room} then ${tokensAt} + ${p("tokensMs")} else ${row}.tokens_at end,
      running = case when ${room} then ${running} + 1 else ${running} end,
      lease_until = case when ${room} then ${larger}(${row}.lease_until, ${p("leaseUntil")}) else ${row}.lease_until end,
      epoch = case when ${live} then ${row}.epoch else ${row}.epoch + 1 end,
      admitted = case when ${room} then 1 else 0 end,
      prev_calls = case when ${sameHour} then ${row}.prev_calls when ${lastHour} then ${row}.hour_calls else 0 end,
      prev_refusals = case when ${sameHour} then ${row}.prev_refusals when ${lastHour} then ${row}.hour_refusals else 0 end,
      hour_calls = (case when ${sameHour} then ${row}.hour_calls else 0 end) + (case when ${room} then 1 else 0 end),
      hour_refusals = (case when ${sameHour} then ${row}.hour_refusals else 0 end) + (case when ${room} then 0 else 1 end),
      hour = ${p("hour")}
    returning admitted, requests_at, tokens_at, running, epoch`;
  };
  /** A call's end: its unused tokens' time given back, and (in its epoch) one call fewer running. */
  const end = () => `update rate_limits set tokens_at = tokens_at - ${p("giveBackMs")},
      requests_at = requests_at - ${p("requestGiveBackMs")},
      running = case when epoch = ${p("epoch")} and running > 0 then running - 1 else running end
    where subject = ${p("subject")}`;
  const renew = () => `update rate_limits set lease_until = ${larger}(lease_until, ${p("leaseUntil")})
    where subject = ${p("subject")} and epoch = ${p("epoch")}`;
  const busiest =
    () => `select subject as key, hour, hour_calls, hour_refusals, prev_calls, prev_refusals from rate_limits
    where hour >= ${p("hour")} - 1 and (subject like 'key:%' or subject like 'wallet:%')
    order by case when hour = ${p("hour")} then hour_calls + prev_calls else hour_calls end desc
    limit ${p("count")}`;
  return { take, end, renew, busiest };
}

/** A new subject's row, as admitting its first call would write it (the upsert's insert values). */
export function firstValues(step: {
  now: number;
  windowMs: number;
  requestMs: number;
  tokensMs: number;
  msPerToken: number;
  concurrent: number;
}) {
  const admitted = (step.msPerToken === 0 || step.tokensMs <= step.windowMs) && step.requestMs <= step.windowMs;
  return {
    firstAdmitted: admitted ? 1 : 0,
    firstRequestsAt: admitted ? step.now + step.requestMs : step.now,
    firstTokensAt: admitted ? step.now + step.tokensMs : step.now,
    firstRunning: admitted ? 1 : 0,
  };
}

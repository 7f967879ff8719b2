CREATE TABLE "rate_limit_uses" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "rate_limit_uses_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"key" text NOT NULL,
	"at" timestamp with time zone NOT NULL,
	"tokens" bigint DEFAULT 0 NOT NULL,
	"lease_until" timestamp with time zone
);
--> statement-breakpoint
CREATE INDEX "rate_limit_uses_key_at_idx" ON "rate_limit_uses" USING btree ("key","at");--> statement-breakpoint

-- Admits one call of p_key if each limit (0: none) still has room: calls started within the window (p_window_ms),
-- the tokens they count, and calls still running (lease_until ahead). Returns the row's id (null when refused) and
-- what it saw: the counts including this call when admitted, without it when refused, and the oldest call's start
-- within the window. One key's calls are admitted one at a time, on every instance.
CREATE FUNCTION paysvc_take_rate_limit(
  p_key text, p_now timestamptz, p_window_ms bigint, p_requests integer, p_tokens bigint, p_concurrent integer,
  p_use_tokens bigint, p_lease_until timestamptz
) RETURNS TABLE (taken_id bigint, used_requests bigint, used_tokens bigint, running bigint, oldest timestamptz)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_since timestamptz := p_now - p_window_ms * interval '1 millisecond';
  v_requests bigint;
  v_tokens bigint;
  v_running bigint;
  v_oldest timestamptz;
  v_id bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('paysvc_rate_limit:' || p_key, 0));
  DELETE FROM rate_limit_uses u
    WHERE u.key = p_key AND u.at <= v_since AND (u.lease_until IS NULL OR u.lease_until <= p_now);
  SELECT count(*) FILTER (WHERE u.at > v_since),
         coalesce(sum(u.tokens) FILTER (WHERE u.at > v_since), 0),
         count(*) FILTER (WHERE u.lease_until > p_now),
         min(u.at) FILTER (WHERE u.at > v_since)
    INTO v_requests, v_tokens, v_running, v_oldest
    FROM rate_limit_uses u WHERE u.key = p_key;
  IF (p_requests > 0 AND v_requests + 1 > p_requests)
     OR (p_tokens > 0 AND v_tokens + p_use_tokens > p_tokens)
     OR (p_concurrent > 0 AND v_running + 1 > p_concurrent) THEN
    RETURN QUERY SELECT NULL::bigint, v_requests, v_tokens, v_running, v_oldest;
    RETURN;
  END IF;
  INSERT INTO rate_limit_uses (key, at, tokens, lease_until)
    VALUES (p_key, p_now, p_use_tokens, p_lease_until) RETURNING id INTO v_id;
  RETURN QUERY SELECT v_id, v_requests + 1, v_tokens + p_use_tokens, v_running + 1, coalesce(v_oldest, p_now);
END
$$;

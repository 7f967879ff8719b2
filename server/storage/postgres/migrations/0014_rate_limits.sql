CREATE TABLE "rate_limit_calls" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "rate_limit_calls_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"key" text NOT NULL,
	"at" timestamp with time zone NOT NULL,
	"tokens" bigint DEFAULT 0 NOT NULL,
	"lease_until" timestamp with time zone,
	"counted" boolean DEFAULT true NOT NULL
);
--> statement-breakpoint
CREATE TABLE "rate_limit_counts" (
	"key" text PRIMARY KEY NOT NULL,
	"requests" bigint DEFAULT 0 NOT NULL,
	"tokens" bigint DEFAULT 0 NOT NULL,
	"hour" bigint DEFAULT 0 NOT NULL,
	"hour_calls" bigint DEFAULT 0 NOT NULL,
	"hour_refusals" bigint DEFAULT 0 NOT NULL,
	"prev_calls" bigint DEFAULT 0 NOT NULL,
	"prev_refusals" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
ALTER TABLE "prepaid_keys" ADD COLUMN "limits" text;--> statement-breakpoint
CREATE INDEX "rate_limit_calls_key_at_idx" ON "rate_limit_calls" USING btree ("key","at");--> statement-breakpoint
CREATE INDEX "rate_limit_calls_key_lease_idx" ON "rate_limit_calls" USING btree ("key","lease_until");
--> statement-breakpoint

-- Admits one call of p_key if each limit (0: none) still has room: calls started within the window (p_window_ms)
-- and the tokens they count (kept in rate_limit_counts, calls that left the window taken out first), and calls
-- still running (lease_until ahead). Returns the new call's id (null when refused) and what it saw: the counts
-- including this call when admitted, without it when refused, and the oldest call's start within the window. Each
-- subject's calls admitted and refused in the clock hour of its last call, and the hour before, are counted for the
-- operator's page. One key's calls are admitted, ended and given back one at a time, on every instance.
CREATE FUNCTION paysvc_take_rate_limit(
  p_key text, p_now timestamptz, p_window_ms bigint, p_requests integer, p_tokens bigint, p_concurrent integer,
  p_use_tokens bigint, p_lease_until timestamptz
) RETURNS TABLE (taken_id bigint, used_requests bigint, used_tokens bigint, running bigint, oldest timestamptz)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_since timestamptz := p_now - p_window_ms * interval '1 millisecond';
  v_hour bigint := floor(extract(epoch from p_now) / 3600);
  v_left_requests bigint;
  v_left_tokens bigint;
  v_requests bigint;
  v_tokens bigint;
  v_running bigint;
  v_oldest timestamptz;
  v_id bigint;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('paysvc_rate_limit:' || p_key, 0));
  WITH gone AS (
    UPDATE rate_limit_calls c SET counted = false
      WHERE c.key = p_key AND c.at <= v_since AND c.counted
      RETURNING c.tokens
  )
  SELECT count(*), coalesce(sum(gone.tokens), 0) INTO v_left_requests, v_left_tokens FROM gone;
  DELETE FROM rate_limit_calls c
    WHERE c.key = p_key AND c.at <= v_since AND NOT c.counted AND (c.lease_until IS NULL OR c.lease_until <= p_now);
  INSERT INTO rate_limit_counts AS k (key, requests, tokens, hour) VALUES (p_key, 0, 0, v_hour)
    ON CONFLICT (key) DO UPDATE SET
      requests = k.requests - v_left_requests,
      tokens = k.tokens - v_left_tokens,
      prev_calls = CASE WHEN k.hour = v_hour THEN k.prev_calls WHEN k.hour = v_hour - 1 THEN k.hour_calls ELSE 0 END,
      prev_refusals =
        CASE WHEN k.hour = v_hour THEN k.prev_refusals WHEN k.hour = v_hour - 1 THEN k.hour_refusals ELSE 0 END,
      hour_calls = CASE WHEN k.hour = v_hour THEN k.hour_calls ELSE 0 END,
      hour_refusals = CASE WHEN k.hour = v_hour THEN k.hour_refusals ELSE 0 END,
      hour = v_hour
    RETURNING k.requests, k.tokens INTO v_requests, v_tokens;
  SELECT count(*) INTO v_running FROM rate_limit_calls c WHERE c.key = p_key AND c.lease_until > p_now;
  SELECT c.at INTO v_oldest FROM rate_limit_calls c WHERE c.key = p_key AND c.at > v_since ORDER BY c.at LIMIT 1;
  IF (p_requests > 0 AND v_requests + 1 > p_requests)
     OR (p_tokens > 0 AND v_tokens + p_use_tokens > p_tokens)
     OR (p_concurrent > 0 AND v_running + 1 > p_concurrent) THEN
    UPDATE rate_limit_counts k SET hour_refusals = k.hour_refusals + 1 WHERE k.key = p_key;
    RETURN QUERY SELECT NULL::bigint, v_requests, v_tokens, v_running, v_oldest;
    RETURN;
  END IF;
  INSERT INTO rate_limit_calls (key, at, tokens, lease_until)
    VALUES (p_key, p_now, p_use_tokens, p_lease_until) RETURNING id INTO v_id;
  UPDATE rate_limit_counts k
    SET requests = k.requests + 1, tokens = k.tokens + p_use_tokens, hour_calls = k.hour_calls + 1
    WHERE k.key = p_key;
  RETURN QUERY SELECT v_id, v_requests + 1, v_tokens + p_use_tokens, v_running + 1, coalesce(v_oldest, p_now);
END
$$;
--> statement-breakpoint

-- Ends call p_id: it runs no more and counts p_tokens while within the window; given back (p_give), it counts
-- nothing at all.
CREATE FUNCTION paysvc_end_rate_limit(p_id bigint, p_tokens bigint, p_give boolean) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_key text;
  v_tokens bigint;
  v_counted boolean;
BEGIN
  SELECT c.key INTO v_key FROM rate_limit_calls c WHERE c.id = p_id;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  PERFORM pg_advisory_xact_lock(hashtextextended('paysvc_rate_limit:' || v_key, 0));
  SELECT c.tokens, c.counted INTO v_tokens, v_counted FROM rate_limit_calls c WHERE c.id = p_id;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  IF p_give THEN
    DELETE FROM rate_limit_calls c WHERE c.id = p_id;
    IF v_counted THEN
      UPDATE rate_limit_counts k SET requests = k.requests - 1, tokens = k.tokens - v_tokens WHERE k.key = v_key;
    END IF;
  ELSIF v_counted THEN
    UPDATE rate_limit_calls c SET tokens = p_tokens, lease_until = NULL WHERE c.id = p_id;
    UPDATE rate_limit_counts k SET tokens = k.tokens + p_tokens - v_tokens WHERE k.key = v_key;
  ELSE
    DELETE FROM rate_limit_calls c WHERE c.id = p_id;
  END IF;
END
$$;

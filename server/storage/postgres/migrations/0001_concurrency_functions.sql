-- The steps that must be atomic across instances, each one function: one round trip, one transaction.
-- Under READ COMMITTED a single INSERT ... SELECT that sums other rows is not atomic against its concurrent twin
-- (both read the same snapshot), so each function first takes a lock that orders the callers, then reads:
-- every later statement of a volatile function takes a fresh snapshot, which sees what the previous holder of the
-- lock committed.

-- Reserves input + up to max_output tokens of the active key of code_hash and model, lowering the output to what
-- is left (at least one token); no row when there is no such key or not even input + 1 is free.
CREATE FUNCTION paysvc_reserve(
  p_code_hash text, p_model text, p_input bigint, p_max_output bigint, p_id bigint,
  p_now timestamptz, p_expires_at timestamptz
) RETURNS TABLE (reserved_key_id bigint, reservation_id bigint, reserved_tokens bigint)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_key_id bigint;
  v_free bigint;
BEGIN
  -- The key row's lock: reservations and settlements of one key go one at a time, on every instance.
  SELECT k.id, k.total_tokens - k.used_tokens INTO v_key_id, v_free
    FROM prepaid_keys k
    WHERE k.code_hash = p_code_hash AND k.model = p_model AND k.status = 'active'
    FOR UPDATE;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  SELECT v_free - coalesce(sum(r.tokens), 0) INTO v_free
    FROM prepaid_reservations r
    WHERE r.key_id = v_key_id AND r.expires_at > p_now;
  IF v_free < p_input + 1 THEN
    RETURN;
  END IF;
  RETURN QUERY
    INSERT INTO prepaid_reservations AS r (key_id, id, tokens, expires_at, created_at)
    VALUES (v_key_id, p_id, p_input + least(p_max_output, v_free - p_input), p_expires_at, p_now)
    RETURNING r.key_id, r.id, r.tokens;
END
$$;
--> statement-breakpoint

-- Counts one free chat request of p_address if every window (lengths in ms, and limits) has room; its id, or
-- null. Rows older than the longest window are dropped on the way.
CREATE FUNCTION paysvc_take_free_chat(
  p_address text, p_now timestamptz, p_window_ms bigint[], p_limit integer[]
) RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_id bigint;
BEGIN
  -- One address's requests are counted one at a time, on every instance, until this transaction ends.
  PERFORM pg_advisory_xact_lock(hashtextextended('paysvc_free_chat:' || p_address, 0));
  FOR i IN 1 .. coalesce(array_length(p_window_ms, 1), 0) LOOP
    IF (SELECT count(*) FROM free_chat_requests f
        WHERE f.address = p_address AND f.at > p_now - p_window_ms[i] * interval '1 millisecond') >= p_limit[i] THEN
      RETURN NULL;
    END IF;
  END LOOP;
  DELETE FROM free_chat_requests f
    WHERE f.address = p_address
      AND f.at <= p_now - (SELECT max(w) FROM unnest(p_window_ms) w) * interval '1 millisecond';
  INSERT INTO free_chat_requests (address, at) VALUES (p_address, p_now) RETURNING id INTO v_id;
  RETURN v_id;
END
$$;

-- A key row now carries what its reservations hold (reserved_tokens), kept under the key row's lock by reserving,
-- settling and sweeping, so that reserving reads one row instead of adding up the key's reservations: their deleted
-- rows stay in the index until vacuum, which made that sum slower with every call of a busy key.
ALTER TABLE "prepaid_keys" ADD COLUMN "reserved_tokens" bigint DEFAULT 0 NOT NULL;
--> statement-breakpoint
UPDATE prepaid_keys k SET reserved_tokens = coalesce((SELECT sum(r.tokens) FROM prepaid_reservations r WHERE r.key_id = k.id), 0);
--> statement-breakpoint

-- Ends the expired reservations of a key, except one that a settlement is ending at this moment (which takes it
-- off the count itself), and takes what they held off the key's count; returns that. Locks the key row until the
-- transaction ends, so callers that sweep several keys go in the order of their ids.
CREATE FUNCTION paysvc_sweep_reservations(p_key_id bigint, p_now timestamptz) RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_swept bigint;
BEGIN
  PERFORM 1 FROM prepaid_keys k WHERE k.id = p_key_id FOR UPDATE;
  WITH swept AS (
    DELETE FROM prepaid_reservations r
      WHERE r.key_id = p_key_id AND r.id IN (
        SELECT e.id FROM prepaid_reservations e
          WHERE e.key_id = p_key_id AND e.expires_at <= p_now
          FOR UPDATE SKIP LOCKED)
      RETURNING r.tokens)
  SELECT coalesce(sum(s.tokens), 0) INTO v_swept FROM swept s;
  IF v_swept > 0 THEN
    UPDATE prepaid_keys k SET reserved_tokens = k.reserved_tokens - v_swept WHERE k.id = p_key_id;
  END IF;
  RETURN v_swept;
END
$$;
--> statement-breakpoint

-- Reserving and settling (below) do not wait for the disk at commit: PostgreSQL's WAL writer writes them out
-- within a fraction of a second (wal_writer_delay, 200 ms by default), as the embedded SQLite's flusher does every
-- 50 ms. If the database server crashes in that window, the last prepaid calls' reservations and charges are lost
-- together: those calls are not charged, and no key is overspent (its used and reserved tokens stay within its
-- total). Key purchases and x402 payments still wait for the disk at every commit.

-- Reserves input + up to max_output tokens of the active key of code_hash and model, lowering the output to what
-- is left (at least one token); no row when there is no such key or not even input + 1 is free.
CREATE OR REPLACE FUNCTION paysvc_reserve(
  p_code_hash text, p_model text, p_input bigint, p_max_output bigint, p_id bigint,
  p_now timestamptz, p_expires_at timestamptz
) RETURNS TABLE (reserved_key_id bigint, reservation_id bigint, reserved_tokens bigint)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_key_id bigint;
  v_free bigint;
  v_status text;
  v_tokens bigint := p_input + p_max_output;
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  -- The usual case, one statement: the key has room for all of it even counting expired reservations not swept
  -- yet. Concurrent callers take turns on the row, each checking the row as the previous one left it.
  UPDATE prepaid_keys k SET reserved_tokens = k.reserved_tokens + v_tokens
    WHERE k.code_hash = p_code_hash AND k.model = p_model AND k.status = 'active'
      AND k.total_tokens - k.used_tokens - k.reserved_tokens >= greatest(v_tokens, p_input + 1)
    RETURNING k.id INTO v_key_id;
  IF NOT FOUND THEN
    -- Short of room: sweep the key's expired reservations (which locks its row), then take what is free.
    SELECT k.id INTO v_key_id FROM prepaid_keys k
      WHERE k.code_hash = p_code_hash AND k.model = p_model AND k.status = 'active';
    IF NOT FOUND THEN
      RETURN;
    END IF;
    PERFORM paysvc_sweep_reservations(v_key_id, p_now);
    -- A fresh snapshot, taken under the lock: what every earlier holder of the lock committed.
    SELECT k.total_tokens - k.used_tokens - k.reserved_tokens, k.status INTO v_free, v_status
      FROM prepaid_keys k WHERE k.id = v_key_id;
    IF v_status <> 'active' OR v_free < p_input + 1 THEN
      RETURN;
    END IF;
    v_tokens := p_input + least(p_max_output, v_free - p_input);
    UPDATE prepaid_keys k SET reserved_tokens = k.reserved_tokens + v_tokens WHERE k.id = v_key_id;
  END IF;
  RETURN QUERY
    INSERT INTO prepaid_reservations AS r (key_id, id, tokens, expires_at, created_at)
    VALUES (v_key_id, p_id, v_tokens, p_expires_at, p_now)
    RETURNING r.key_id, r.id, r.tokens;
END
$$;
--> statement-breakpoint

-- Ends a reservation and charges what it held at most (p_used, capped), in one statement: the DELETE that ends it
-- feeds the UPDATE that charges and takes it off the key's count, so a reservation is charged once however many
-- settle it; one already ended (settled, or swept after it expired) charges nothing.
CREATE FUNCTION paysvc_settle(p_key_id bigint, p_id bigint, p_used bigint, p_now timestamptz) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  WITH ended AS (
    DELETE FROM prepaid_reservations r WHERE r.key_id = p_key_id AND r.id = p_id RETURNING r.tokens
  )
  UPDATE prepaid_keys k SET
    used_tokens = k.used_tokens + c.charge,
    reserved_tokens = k.reserved_tokens - c.tokens,
    status = CASE WHEN k.used_tokens + c.charge >= k.total_tokens THEN 'disabled' ELSE k.status END,
    updated_at = p_now
  FROM (SELECT e.tokens, greatest(0, least(p_used, e.tokens)) AS charge FROM ended e) c
  WHERE k.id = p_key_id;
END
$$;

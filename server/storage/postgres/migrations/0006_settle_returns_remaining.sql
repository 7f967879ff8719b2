-- paysvc_settle answers what the key has left after the charge (its total less what is used and what its
-- reservations hold), in the same call, so that an answer can state it without another round trip.
DROP FUNCTION paysvc_settle(bigint, bigint, bigint, timestamptz);
--> statement-breakpoint
CREATE FUNCTION paysvc_settle(p_key_id bigint, p_id bigint, p_used bigint, p_now timestamptz) RETURNS bigint
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
  RETURN (SELECT greatest(0, k.total_tokens - k.used_tokens - k.reserved_tokens) FROM prepaid_keys k WHERE k.id = p_key_id);
END
$$;

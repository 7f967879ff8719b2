-- The reservations lose their foreign-key constraint, as on SQLite (its migration 0008): paysvc_reserve takes the
-- key id from the key row it has just updated, and keys are never deleted, so the check (a lookup and a share lock
-- of that row on every reservation) guarded nothing.
ALTER TABLE "prepaid_reservations" DROP CONSTRAINT "prepaid_reservations_key_id_prepaid_keys_id_fk";
--> statement-breakpoint

-- A key's balance, from its row alone: its expired reservations are swept first, so that reserved_tokens, the one
-- count of what reservations hold, is what its live reservations hold. No row when there is no such key.
CREATE FUNCTION paysvc_balance(p_key_id bigint, p_now timestamptz)
RETURNS TABLE (total bigint, used bigint, reserved bigint)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  IF EXISTS (SELECT 1 FROM prepaid_reservations r WHERE r.key_id = p_key_id AND r.expires_at <= p_now) THEN
    PERFORM paysvc_sweep_reservations(p_key_id, p_now);
  END IF;
  RETURN QUERY SELECT k.total_tokens, k.used_tokens, k.reserved_tokens FROM prepaid_keys k WHERE k.id = p_key_id;
END
$$;

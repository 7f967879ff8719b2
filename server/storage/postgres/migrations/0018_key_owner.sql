ALTER TABLE "prepaid_keys" ADD COLUMN "owner" text;--> statement-breakpoint
ALTER TABLE "prepaid_keys" ADD COLUMN "code_prefix" text;--> statement-breakpoint
ALTER TABLE "prepaid_keys" ADD COLUMN "last_used_at" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "prepaid_keys_owner_idx" ON "prepaid_keys" USING btree ("owner");--> statement-breakpoint
-- A key's owner is the wallet that paid for it: for keys sold before owners were recorded, their purchase's payer.
UPDATE "prepaid_keys" k SET "owner" = CASE WHEN p."payer" LIKE '0x%' THEN lower(p."payer") ELSE p."payer" END
FROM "payments" p WHERE p."nonce" = k."payment_nonce" AND k."owner" IS NULL;
--> statement-breakpoint
-- paysvc_settle also records when the key was last charged, and leaves a revoked key revoked.
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
    status = CASE WHEN k.status = 'active' AND k.used_tokens + c.charge >= k.total_tokens THEN 'disabled' ELSE k.status END,
    last_used_at = CASE WHEN c.charge > 0 THEN p_now ELSE k.last_used_at END,
    updated_at = p_now
  FROM (SELECT e.tokens, greatest(0, least(p_used, e.tokens)) AS charge FROM ended e) c
  WHERE k.id = p_key_id;
  RETURN (SELECT greatest(0, k.total_tokens - k.used_tokens - k.reserved_tokens) FROM prepaid_keys k WHERE k.id = p_key_id);
END
$$;

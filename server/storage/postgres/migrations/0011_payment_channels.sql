CREATE TABLE "payment_channels" (
	"channel_id" text PRIMARY KEY NOT NULL,
	"payer" text NOT NULL,
	"receiver" text NOT NULL,
	"token" text NOT NULL,
	"channel_config" text NOT NULL,
	"charged_cumulative_amount" numeric(78, 0) NOT NULL,
	"signed_max_claimable" numeric(78, 0) NOT NULL,
	"signature" text NOT NULL,
	"balance" numeric(78, 0) NOT NULL,
	"total_claimed" numeric(78, 0) NOT NULL,
	"withdraw_requested_at" bigint NOT NULL,
	"refund_nonce" bigint NOT NULL,
	"onchain_synced_at" bigint,
	"last_request_timestamp" bigint NOT NULL,
	"pending_id" text,
	"pending_signed_max_claimable" numeric(78, 0),
	"pending_expires_at" bigint,
	"version" bigint NOT NULL
);
--> statement-breakpoint
CREATE INDEX "payment_channels_payer_idx" ON "payment_channels" USING btree ("payer");
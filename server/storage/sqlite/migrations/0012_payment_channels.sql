CREATE TABLE `payment_channels` (
	`channel_id` text PRIMARY KEY NOT NULL,
	`payer` text NOT NULL,
	`receiver` text NOT NULL,
	`token` text NOT NULL,
	`channel_config` text NOT NULL,
	`charged_cumulative_amount` text NOT NULL,
	`signed_max_claimable` text NOT NULL,
	`signature` text NOT NULL,
	`balance` text NOT NULL,
	`total_claimed` text NOT NULL,
	`withdraw_requested_at` integer NOT NULL,
	`refund_nonce` integer NOT NULL,
	`onchain_synced_at` integer,
	`last_request_timestamp` integer NOT NULL,
	`pending_id` text,
	`pending_signed_max_claimable` text,
	`pending_expires_at` integer,
	`version` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `payment_channels_payer_idx` ON `payment_channels` (`payer`);
CREATE TABLE `payments` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`nonce` text NOT NULL,
	`payer` text NOT NULL,
	`amount` text NOT NULL,
	`network` text NOT NULL,
	`resource` text NOT NULL,
	`body_hash` text NOT NULL,
	`status` text NOT NULL,
	`failure_reason` text,
	`transaction` text,
	`quote_ms` integer,
	`verify_ms` integer,
	`upstream_ms` integer,
	`settle_ms` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `payments_nonce_unique` ON `payments` (`nonce`);--> statement-breakpoint
CREATE INDEX `payments_payer_idx` ON `payments` (`payer`);--> statement-breakpoint
CREATE INDEX `payments_status_idx` ON `payments` (`status`);
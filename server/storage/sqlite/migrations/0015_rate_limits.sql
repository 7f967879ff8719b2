CREATE TABLE `rate_limit_calls` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`key` text NOT NULL,
	`at` integer NOT NULL,
	`tokens` integer DEFAULT 0 NOT NULL,
	`lease_until` integer,
	`counted` integer DEFAULT 1 NOT NULL
);
--> statement-breakpoint
CREATE INDEX `rate_limit_calls_key_at_idx` ON `rate_limit_calls` (`key`,`at`);--> statement-breakpoint
CREATE INDEX `rate_limit_calls_key_lease_idx` ON `rate_limit_calls` (`key`,`lease_until`);--> statement-breakpoint
CREATE TABLE `rate_limit_counts` (
	`key` text PRIMARY KEY NOT NULL,
	`requests` integer DEFAULT 0 NOT NULL,
	`tokens` integer DEFAULT 0 NOT NULL,
	`hour` integer DEFAULT 0 NOT NULL,
	`hour_calls` integer DEFAULT 0 NOT NULL,
	`hour_refusals` integer DEFAULT 0 NOT NULL,
	`prev_calls` integer DEFAULT 0 NOT NULL,
	`prev_refusals` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
ALTER TABLE `prepaid_keys` ADD `limits` text;
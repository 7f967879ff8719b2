CREATE TABLE `rate_limit_uses` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`key` text NOT NULL,
	`at` integer NOT NULL,
	`tokens` integer DEFAULT 0 NOT NULL,
	`lease_until` integer
);
--> statement-breakpoint
CREATE INDEX `rate_limit_uses_key_at_idx` ON `rate_limit_uses` (`key`,`at`);
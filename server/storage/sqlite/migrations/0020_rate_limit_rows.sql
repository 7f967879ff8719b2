CREATE TABLE `rate_limits` (
	`subject` text PRIMARY KEY NOT NULL,
	`requests_at` real NOT NULL,
	`tokens_at` real NOT NULL,
	`running` integer NOT NULL,
	`lease_until` real NOT NULL,
	`epoch` integer NOT NULL,
	`admitted` integer NOT NULL,
	`hour` integer NOT NULL,
	`hour_calls` integer NOT NULL,
	`hour_refusals` integer NOT NULL,
	`prev_calls` integer NOT NULL,
	`prev_refusals` integer NOT NULL
);
--> statement-breakpoint
DROP TABLE `rate_limit_calls`;--> statement-breakpoint
DROP TABLE `rate_limit_counts`;
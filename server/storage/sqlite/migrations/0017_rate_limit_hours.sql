ALTER TABLE `rate_limit_counts` ADD `hour` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `rate_limit_counts` ADD `hour_calls` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `rate_limit_counts` ADD `hour_refusals` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `rate_limit_counts` ADD `prev_calls` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `rate_limit_counts` ADD `prev_refusals` integer DEFAULT 0 NOT NULL;
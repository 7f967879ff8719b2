CREATE TABLE `quote_holds` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `quote_holds_expires_at_idx` ON `quote_holds` (`expires_at`);
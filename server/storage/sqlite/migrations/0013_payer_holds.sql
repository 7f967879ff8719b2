CREATE TABLE `payer_holds` (
	`key` text PRIMARY KEY NOT NULL,
	`payer` text NOT NULL,
	`amount` text NOT NULL,
	`sponsored` integer DEFAULT 0 NOT NULL,
	`expires_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `payer_holds_payer_idx` ON `payer_holds` (`payer`);
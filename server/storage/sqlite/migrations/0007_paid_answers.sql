CREATE TABLE `paid_answers` (
	`payer` text NOT NULL,
	`payment_id` text NOT NULL,
	`nonce` text NOT NULL,
	`request` text NOT NULL,
	`answer` text NOT NULL,
	`expires_at` integer NOT NULL,
	PRIMARY KEY(`payer`, `payment_id`)
);
--> statement-breakpoint
CREATE INDEX `paid_answers_expires_at_idx` ON `paid_answers` (`expires_at`);
CREATE TABLE `prepaid_keys` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`code_hash` text NOT NULL,
	`model` text NOT NULL,
	`total_tokens` integer NOT NULL,
	`used_tokens` integer DEFAULT 0 NOT NULL,
	`status` text NOT NULL,
	`payment_nonce` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `prepaid_keys_code_hash_unique` ON `prepaid_keys` (`code_hash`);--> statement-breakpoint
CREATE TABLE `prepaid_reservations` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`key_id` integer NOT NULL,
	`tokens` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`key_id`) REFERENCES `prepaid_keys`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `prepaid_reservations_key_idx` ON `prepaid_reservations` (`key_id`,`expires_at`);
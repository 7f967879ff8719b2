CREATE TABLE `free_chat_requests` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`address` text NOT NULL,
	`at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `free_chat_requests_address_at_idx` ON `free_chat_requests` (`address`,`at`);
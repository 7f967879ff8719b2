-- Written by drizzle-kit, then WITHOUT ROWID added by hand (drizzle's schema cannot say it): see schema.ts.
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_prepaid_reservations` (
	`key_id` integer NOT NULL,
	`id` integer NOT NULL,
	`tokens` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`key_id`, `id`),
	FOREIGN KEY (`key_id`) REFERENCES `prepaid_keys`(`id`) ON UPDATE no action ON DELETE no action
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_prepaid_reservations`("key_id", "id", "tokens", "expires_at", "created_at") SELECT "key_id", "id", "tokens", "expires_at", "created_at" FROM `prepaid_reservations`;--> statement-breakpoint
DROP TABLE `prepaid_reservations`;--> statement-breakpoint
ALTER TABLE `__new_prepaid_reservations` RENAME TO `prepaid_reservations`;--> statement-breakpoint
PRAGMA foreign_keys=ON;
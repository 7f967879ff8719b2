-- Written by drizzle-kit, then WITHOUT ROWID (as in 0003) and the count's first value added by hand.
-- A key row carries what its reservations hold (reserved_tokens), as on PostgreSQL (its migration 0002): reserving
-- reads one row instead of adding up the key's reservations, and settling answers what is left from the same row.
-- The reservations lose their foreign-key constraint (see schema.ts).
PRAGMA foreign_keys=OFF;--> statement-breakpoint
CREATE TABLE `__new_prepaid_reservations` (
	`key_id` integer NOT NULL,
	`id` integer NOT NULL,
	`tokens` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`key_id`, `id`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_prepaid_reservations`("key_id", "id", "tokens", "expires_at", "created_at") SELECT "key_id", "id", "tokens", "expires_at", "created_at" FROM `prepaid_reservations`;--> statement-breakpoint
DROP TABLE `prepaid_reservations`;--> statement-breakpoint
ALTER TABLE `__new_prepaid_reservations` RENAME TO `prepaid_reservations`;--> statement-breakpoint
PRAGMA foreign_keys=ON;--> statement-breakpoint
ALTER TABLE `prepaid_keys` ADD `reserved_tokens` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
UPDATE `prepaid_keys` SET `reserved_tokens` = coalesce((SELECT sum(r.`tokens`) FROM `prepaid_reservations` r WHERE r.`key_id` = `prepaid_keys`.`id`), 0);

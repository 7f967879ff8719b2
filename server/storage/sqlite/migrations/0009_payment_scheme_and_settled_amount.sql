ALTER TABLE `payments` ADD `scheme` text DEFAULT 'exact' NOT NULL;--> statement-breakpoint
ALTER TABLE `payments` ADD `settled_amount` text;--> statement-breakpoint
UPDATE `payments` SET `settled_amount` = `amount` WHERE `status` = 'settled';
ALTER TABLE `payments` ADD `endpoint` text;--> statement-breakpoint
ALTER TABLE `payments` ADD `model` text;--> statement-breakpoint
CREATE INDEX `payments_created_at_idx` ON `payments` (`created_at`);
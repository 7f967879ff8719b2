ALTER TABLE `prepaid_keys` ADD `owner` text;--> statement-breakpoint
ALTER TABLE `prepaid_keys` ADD `code_prefix` text;--> statement-breakpoint
ALTER TABLE `prepaid_keys` ADD `last_used_at` integer;--> statement-breakpoint
CREATE INDEX `prepaid_keys_owner_idx` ON `prepaid_keys` (`owner`);--> statement-breakpoint
-- A key's owner is the wallet that paid for it: for keys sold before owners were recorded, their purchase's payer.
UPDATE `prepaid_keys` SET `owner` = (
  SELECT CASE WHEN p.`payer` LIKE '0x%' THEN lower(p.`payer`) ELSE p.`payer` END
  FROM `payments` p WHERE p.`nonce` = `prepaid_keys`.`payment_nonce`
) WHERE `owner` IS NULL AND `payment_nonce` IS NOT NULL;

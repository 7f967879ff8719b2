ALTER TABLE "payments" ADD COLUMN "scheme" text DEFAULT 'exact' NOT NULL;--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "settled_amount" numeric(78, 0);--> statement-breakpoint
UPDATE "payments" SET "settled_amount" = "amount" WHERE "status" = 'settled';
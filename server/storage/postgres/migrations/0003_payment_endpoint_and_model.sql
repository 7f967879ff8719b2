ALTER TABLE "payments" ADD COLUMN "endpoint" text;--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "model" text;--> statement-breakpoint
CREATE INDEX "payments_created_at_idx" ON "payments" USING btree ("created_at");
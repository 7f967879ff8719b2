CREATE TABLE "payer_holds" (
	"key" text PRIMARY KEY NOT NULL,
	"payer" text NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"sponsored" boolean DEFAULT false NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "payer_holds_payer_idx" ON "payer_holds" USING btree ("payer");
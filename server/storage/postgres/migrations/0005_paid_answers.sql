CREATE TABLE "paid_answers" (
	"payer" text NOT NULL,
	"payment_id" text NOT NULL,
	"nonce" text NOT NULL,
	"request" text NOT NULL,
	"answer" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "paid_answers_payer_payment_id_pk" PRIMARY KEY("payer","payment_id")
);
--> statement-breakpoint
CREATE INDEX "paid_answers_expires_at_idx" ON "paid_answers" USING btree ("expires_at");
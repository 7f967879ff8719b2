CREATE TABLE "free_chat_requests" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "free_chat_requests_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"address" text NOT NULL,
	"at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "payments" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "payments_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"nonce" text NOT NULL,
	"payer" text NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"network" text NOT NULL,
	"resource" text NOT NULL,
	"body_hash" text NOT NULL,
	"status" text NOT NULL,
	"failure_reason" text,
	"transaction" text,
	"quote_ms" integer,
	"verify_ms" integer,
	"upstream_ms" integer,
	"settle_ms" integer,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "payments_nonce_unique" UNIQUE("nonce")
);
--> statement-breakpoint
CREATE TABLE "prepaid_keys" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "prepaid_keys_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"code_hash" text NOT NULL,
	"model" text NOT NULL,
	"total_tokens" bigint NOT NULL,
	"used_tokens" bigint DEFAULT 0 NOT NULL,
	"status" text NOT NULL,
	"payment_nonce" text,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "prepaid_keys_code_hash_unique" UNIQUE("code_hash")
);
--> statement-breakpoint
CREATE TABLE "prepaid_reservations" (
	"key_id" bigint NOT NULL,
	"id" bigint NOT NULL,
	"tokens" bigint NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "prepaid_reservations_key_id_id_pk" PRIMARY KEY("key_id","id")
);
--> statement-breakpoint
CREATE TABLE "quote_holds" (
	"key" text PRIMARY KEY NOT NULL,
	"value" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "prepaid_reservations" ADD CONSTRAINT "prepaid_reservations_key_id_prepaid_keys_id_fk" FOREIGN KEY ("key_id") REFERENCES "public"."prepaid_keys"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "free_chat_requests_address_at_idx" ON "free_chat_requests" USING btree ("address","at");--> statement-breakpoint
CREATE INDEX "payments_payer_idx" ON "payments" USING btree ("payer");--> statement-breakpoint
CREATE INDEX "payments_status_idx" ON "payments" USING btree ("status");--> statement-breakpoint
CREATE INDEX "quote_holds_expires_at_idx" ON "quote_holds" USING btree ("expires_at");
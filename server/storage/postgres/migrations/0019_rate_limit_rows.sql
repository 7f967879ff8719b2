CREATE TABLE "rate_limits" (
	"subject" text PRIMARY KEY NOT NULL,
	"requests_at" double precision NOT NULL,
	"tokens_at" double precision NOT NULL,
	"running" integer NOT NULL,
	"lease_until" double precision NOT NULL,
	"epoch" integer NOT NULL,
	"admitted" integer NOT NULL,
	"hour" bigint NOT NULL,
	"hour_calls" bigint NOT NULL,
	"hour_refusals" bigint NOT NULL,
	"prev_calls" bigint NOT NULL,
	"prev_refusals" bigint NOT NULL
);
--> statement-breakpoint
DROP TABLE "rate_limit_calls" CASCADE;--> statement-breakpoint
DROP TABLE "rate_limit_counts" CASCADE;--> statement-breakpoint
-- One row per subject replaces a row per call: its functions go with the tables.
DROP FUNCTION paysvc_take_rate_limit(text, timestamptz, bigint, integer, bigint, integer, bigint, timestamptz);
--> statement-breakpoint
DROP FUNCTION paysvc_end_rate_limit(bigint, bigint, boolean);

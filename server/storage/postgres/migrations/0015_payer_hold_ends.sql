CREATE TABLE "payer_hold_ends" (
	"payer" text PRIMARY KEY NOT NULL,
	"ended" bigint NOT NULL
);

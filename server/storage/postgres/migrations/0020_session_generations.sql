CREATE TABLE "session_generations" (
	"subject" text PRIMARY KEY NOT NULL,
	"generation" bigint NOT NULL
);
--> statement-breakpoint
DROP TABLE "operator_sessions" CASCADE;--> statement-breakpoint
DROP TABLE "operator_sign_ins" CASCADE;
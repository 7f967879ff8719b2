CREATE TABLE `session_generations` (
	`subject` text PRIMARY KEY NOT NULL,
	`generation` integer NOT NULL
);
--> statement-breakpoint
DROP TABLE `operator_sessions`;--> statement-breakpoint
DROP TABLE `operator_sign_ins`;
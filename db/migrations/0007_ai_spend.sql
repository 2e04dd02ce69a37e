CREATE TABLE `ai_spend_entries` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`day` text NOT NULL,
	`operation` text NOT NULL,
	`model` text NOT NULL,
	`request_id` text NOT NULL,
	`state` text NOT NULL,
	`reserved_millicents` integer NOT NULL,
	`actual_millicents` integer,
	`prompt_tokens` integer,
	`completion_tokens` integer,
	`created_at` integer NOT NULL,
	`closed_at` integer,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "ai_spend_entries_state_known" CHECK("state" IN ('reserved', 'settled', 'released')),
	CONSTRAINT "ai_spend_entries_reserved_not_negative" CHECK("ai_spend_entries"."reserved_millicents" >= 0),
	CONSTRAINT "ai_spend_entries_settled_has_actual" CHECK(("ai_spend_entries"."state" = 'settled') = ("ai_spend_entries"."actual_millicents" IS NOT NULL))
);
--> statement-breakpoint
CREATE INDEX `ai_spend_entries_workspace_day_idx` ON `ai_spend_entries` (`workspace_id`,`day`);--> statement-breakpoint
CREATE TABLE `idempotency_claims` (
	`workspace_id` text NOT NULL,
	`key` text NOT NULL,
	`claimed_until` integer NOT NULL,
	PRIMARY KEY(`workspace_id`, `key`),
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE cascade
);

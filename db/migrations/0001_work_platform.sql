CREATE TABLE `events` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`type` text NOT NULL,
	`occurred_at` integer NOT NULL,
	`payload` text NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `events_occurred_at_idx` ON `events` (`occurred_at`);--> statement-breakpoint
CREATE INDEX `events_workspace_id_idx` ON `events` (`workspace_id`,`occurred_at`);--> statement-breakpoint
CREATE TABLE `idempotency_keys` (
	`workspace_id` text NOT NULL,
	`key` text NOT NULL,
	`method` text NOT NULL,
	`path` text NOT NULL,
	`status` integer NOT NULL,
	`headers` text NOT NULL,
	`body` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	PRIMARY KEY(`workspace_id`, `key`),
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `idempotency_keys_expires_at_idx` ON `idempotency_keys` (`expires_at`);--> statement-breakpoint
CREATE TABLE `personal_access_tokens` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`user_id` text NOT NULL,
	`token_hash` text NOT NULL,
	`token_prefix` text NOT NULL,
	`scopes` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer,
	`revoked_at` integer,
	`rotated_to` text,
	FOREIGN KEY (`workspace_id`,`user_id`) REFERENCES `users`(`workspace_id`,`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `personal_access_tokens_token_hash_unique` ON `personal_access_tokens` (`token_hash`);--> statement-breakpoint
CREATE INDEX `personal_access_tokens_workspace_id_idx` ON `personal_access_tokens` (`workspace_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `projects` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`status` text NOT NULL,
	`version` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "projects_name_length" CHECK(length("name") BETWEEN 1 AND 120),
	CONSTRAINT "projects_description_length" CHECK("description" IS NULL OR length("description") <= 2000),
	CONSTRAINT "projects_status_known" CHECK("status" IN ('ACTIVE', 'ARCHIVED')),
	CONSTRAINT "projects_version_positive" CHECK("projects"."version" >= 1)
);
--> statement-breakpoint
CREATE UNIQUE INDEX `projects_workspace_id_id_unique` ON `projects` (`workspace_id`,`id`);--> statement-breakpoint
CREATE INDEX `projects_created_at_idx` ON `projects` (`workspace_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `projects_updated_at_idx` ON `projects` (`workspace_id`,`updated_at`,`id`);--> statement-breakpoint
CREATE INDEX `projects_name_idx` ON `projects` (`workspace_id`,`name`,`id`);--> statement-breakpoint
CREATE TABLE `quota_counters` (
	`workspace_id` text NOT NULL,
	`period` text NOT NULL,
	`count` integer NOT NULL,
	PRIMARY KEY(`workspace_id`, `period`),
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `tasks` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`project_id` text NOT NULL,
	`title` text NOT NULL,
	`status` text NOT NULL,
	`priority` text NOT NULL,
	`priority_rank` integer NOT NULL,
	`due_on` integer,
	`assignee_id` text,
	`version` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`workspace_id`,`project_id`) REFERENCES `projects`(`workspace_id`,`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`workspace_id`,`assignee_id`) REFERENCES `users`(`workspace_id`,`id`) ON UPDATE no action ON DELETE no action,
	CONSTRAINT "tasks_title_length" CHECK(length("title") BETWEEN 1 AND 200),
	CONSTRAINT "tasks_status_known" CHECK("status" IN ('TODO', 'IN_PROGRESS', 'BLOCKED', 'DONE')),
	CONSTRAINT "tasks_priority_rank_matches" CHECK(("priority" = 'LOW' AND "priority_rank" = 1) OR ("priority" = 'MEDIUM' AND "priority_rank" = 2) OR ("priority" = 'HIGH' AND "priority_rank" = 3)),
	CONSTRAINT "tasks_version_positive" CHECK("tasks"."version" >= 1)
);
--> statement-breakpoint
CREATE INDEX `tasks_project_id_idx` ON `tasks` (`workspace_id`,`project_id`);--> statement-breakpoint
CREATE INDEX `tasks_assignee_id_idx` ON `tasks` (`workspace_id`,`assignee_id`);--> statement-breakpoint
CREATE INDEX `tasks_created_at_idx` ON `tasks` (`workspace_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `tasks_updated_at_idx` ON `tasks` (`workspace_id`,`updated_at`,`id`);--> statement-breakpoint
CREATE INDEX `tasks_title_idx` ON `tasks` (`workspace_id`,`title`,`id`);--> statement-breakpoint
CREATE INDEX `tasks_priority_rank_idx` ON `tasks` (`workspace_id`,`priority_rank`,`id`);--> statement-breakpoint
CREATE INDEX `tasks_due_on_idx` ON `tasks` (`workspace_id`,CASE WHEN "due_on" IS NULL THEN 9007199254740991 ELSE "due_on" END,`id`);--> statement-breakpoint
CREATE TABLE `users` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`role` text NOT NULL,
	`name` text,
	`email` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "users_role_known" CHECK("role" IN ('owner', 'admin', 'member'))
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_workspace_id_id_unique` ON `users` (`workspace_id`,`id`);--> statement-breakpoint
CREATE TABLE `workspaces` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`plan` text NOT NULL,
	`read_per_minute_override` integer,
	`write_per_minute_override` integer,
	`ai_per_minute_override` integer,
	`monthly_quota_override` integer,
	`ai_daily_spend_cap_cents_override` integer,
	`webhook_retry_delays_seconds_override` text,
	`created_at` integer NOT NULL,
	CONSTRAINT "workspaces_plan_known" CHECK("plan" IN ('free', 'pro', 'team', 'business', 'enterprise')),
	CONSTRAINT "workspaces_name_not_empty" CHECK(length("workspaces"."name") >= 1),
	CONSTRAINT "workspaces_overrides_in_range" CHECK(coalesce("workspaces"."read_per_minute_override", 1) >= 1 AND coalesce("workspaces"."write_per_minute_override", 1) >= 1
        AND coalesce("workspaces"."ai_per_minute_override", 1) >= 1 AND coalesce("workspaces"."monthly_quota_override", 0) >= 0
        AND coalesce("workspaces"."ai_daily_spend_cap_cents_override", 0) >= 0)
);

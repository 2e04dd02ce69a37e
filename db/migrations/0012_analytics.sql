ALTER TABLE `tasks` ADD `completed_at` integer;--> statement-breakpoint
CREATE INDEX `tasks_completed_at_idx` ON `tasks` (`workspace_id`,`completed_at`,`created_at`,`project_id`) WHERE "tasks"."completed_at" IS NOT NULL;--> statement-breakpoint
CREATE INDEX `tasks_due_on_analytics_idx` ON `tasks` (`workspace_id`,`due_on`,`completed_at`,`created_at`,`priority`,`project_id`) WHERE "tasks"."due_on" IS NOT NULL;--> statement-breakpoint
CREATE INDEX `tasks_done_without_completed_at_idx` ON `tasks` (`workspace_id`) WHERE "tasks"."status" = 'DONE' AND "tasks"."completed_at" IS NULL;--> statement-breakpoint
CREATE INDEX `deals_pipeline_idx` ON `deals` (`workspace_id`,`created_at`,`stage`,`currency`,`amount_minor`,`owner_id`);
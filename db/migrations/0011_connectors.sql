CREATE TABLE `connectors` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`kind` text NOT NULL,
	`name` text NOT NULL,
	`status` text NOT NULL,
	`sealed_credential` text,
	`credential_hint` text,
	`credential_expires_at` integer,
	`account_login` text,
	`connected_at` integer,
	`disconnected_at` integer,
	`expired_at` integer,
	`version` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "connectors_kind_known" CHECK("kind" IN ('github')),
	CONSTRAINT "connectors_status_known" CHECK("status" IN ('not_connected', 'connected', 'expired', 'disconnected')),
	CONSTRAINT "connectors_name_length" CHECK(length("name") BETWEEN 1 AND 120),
	CONSTRAINT "connectors_credential_while_usable" CHECK(("status" = 'connected' AND "sealed_credential" IS NOT NULL) OR ("status" IN ('not_connected', 'disconnected') AND "sealed_credential" IS NULL) OR "status" = 'expired'),
	CONSTRAINT "connectors_version_positive" CHECK("connectors"."version" >= 1)
);
--> statement-breakpoint
CREATE UNIQUE INDEX `connectors_workspace_id_id_unique` ON `connectors` (`workspace_id`,`id`);--> statement-breakpoint
CREATE INDEX `connectors_created_at_idx` ON `connectors` (`workspace_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `connectors_updated_at_idx` ON `connectors` (`workspace_id`,`updated_at`,`id`);--> statement-breakpoint
CREATE INDEX `connectors_name_idx` ON `connectors` (`workspace_id`,`name`,`id`);--> statement-breakpoint
CREATE INDEX `connectors_kind_idx` ON `connectors` (`workspace_id`,`kind`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `imported_issues` (
	`workspace_id` text NOT NULL,
	`issue_id` integer NOT NULL,
	`repository` text NOT NULL,
	`issue_number` integer NOT NULL,
	`task_id` text NOT NULL,
	`issue_title` text NOT NULL,
	`issue_state` text NOT NULL,
	`imported_at` integer NOT NULL,
	PRIMARY KEY(`workspace_id`, `issue_id`),
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "imported_issues_state_known" CHECK("issue_state" IN ('open', 'closed'))
);

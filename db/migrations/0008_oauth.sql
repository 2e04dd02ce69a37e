CREATE TABLE `oauth_clients` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`name` text NOT NULL,
	`redirect_uris` text NOT NULL,
	`scopes` text NOT NULL,
	`secret_hash` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "oauth_clients_name_length" CHECK(length("oauth_clients"."name") BETWEEN 1 AND 120)
);
--> statement-breakpoint
CREATE INDEX `oauth_clients_workspace_id_idx` ON `oauth_clients` (`workspace_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `oauth_records` (
	`model` text NOT NULL,
	`id_hash` text NOT NULL,
	`payload` text NOT NULL,
	`grant_id` text,
	`client_id` text,
	`account_id` text,
	`uid` text,
	`expires_at` integer,
	`consumed_at` integer,
	PRIMARY KEY(`model`, `id_hash`)
);
--> statement-breakpoint
CREATE INDEX `oauth_records_grant_id_idx` ON `oauth_records` (`grant_id`);--> statement-breakpoint
CREATE INDEX `oauth_records_client_id_idx` ON `oauth_records` (`client_id`);--> statement-breakpoint
CREATE INDEX `oauth_records_account_id_idx` ON `oauth_records` (`account_id`);--> statement-breakpoint
CREATE INDEX `oauth_records_uid_idx` ON `oauth_records` (`uid`);--> statement-breakpoint
CREATE INDEX `oauth_records_expires_at_idx` ON `oauth_records` (`expires_at`);
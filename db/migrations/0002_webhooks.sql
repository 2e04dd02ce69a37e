CREATE TABLE `webhook_attempts` (
	`delivery_id` text NOT NULL,
	`number` integer NOT NULL,
	`attempted_at` integer NOT NULL,
	`duration_ms` integer NOT NULL,
	`status_code` integer,
	`error_code` text,
	`error_message` text,
	`succeeded` integer NOT NULL,
	`next_attempt_at` integer,
	PRIMARY KEY(`delivery_id`, `number`),
	FOREIGN KEY (`delivery_id`) REFERENCES `webhook_deliveries`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`subscription_id` text NOT NULL,
	`workspace_id` text NOT NULL,
	`event_id` text NOT NULL,
	`event_type` text NOT NULL,
	`replay` integer NOT NULL,
	`status` text NOT NULL,
	`attempt_count` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer,
	`lease_owner` text,
	`lease_expires_at` integer,
	`created_at` integer NOT NULL,
	`completed_at` integer,
	FOREIGN KEY (`subscription_id`) REFERENCES `webhook_subscriptions`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`event_id`) REFERENCES `events`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "webhook_deliveries_status_known" CHECK("status" IN ('PENDING', 'SUCCEEDED', 'FAILED', 'CANCELLED')),
	CONSTRAINT "webhook_deliveries_pending_has_next" CHECK(("webhook_deliveries"."status" = 'PENDING') = ("webhook_deliveries"."next_attempt_at" IS NOT NULL))
);
--> statement-breakpoint
CREATE INDEX `webhook_deliveries_due_idx` ON `webhook_deliveries` (`next_attempt_at`) WHERE "webhook_deliveries"."status" = 'PENDING';--> statement-breakpoint
CREATE INDEX `webhook_deliveries_subscription_idx` ON `webhook_deliveries` (`subscription_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_event_idx` ON `webhook_deliveries` (`event_id`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_completed_at_idx` ON `webhook_deliveries` (`completed_at`);--> statement-breakpoint
CREATE TABLE `webhook_subscriptions` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`url` text NOT NULL,
	`description` text,
	`event_types` text NOT NULL,
	`status` text NOT NULL,
	`disabled_code` text,
	`disabled_message` text,
	`disabled_at` integer,
	`consecutive_failed_events` integer DEFAULT 0 NOT NULL,
	`signing_key_version` integer NOT NULL,
	`sealed_secret` text NOT NULL,
	`sealed_previous_secret` text,
	`previous_secret_expires_at` integer,
	`version` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "webhook_subscriptions_status_known" CHECK("status" IN ('ACTIVE', 'DISABLED')),
	CONSTRAINT "webhook_subscriptions_disabled_reason" CHECK(("webhook_subscriptions"."status" = 'ACTIVE' AND "webhook_subscriptions"."disabled_code" IS NULL) OR ("webhook_subscriptions"."status" = 'DISABLED' AND "webhook_subscriptions"."disabled_code" IS NOT NULL)),
	CONSTRAINT "webhook_subscriptions_previous_secret" CHECK(("webhook_subscriptions"."sealed_previous_secret" IS NULL) = ("webhook_subscriptions"."previous_secret_expires_at" IS NULL))
);
--> statement-breakpoint
CREATE INDEX `webhook_subscriptions_created_at_idx` ON `webhook_subscriptions` (`workspace_id`,`created_at`,`id`);
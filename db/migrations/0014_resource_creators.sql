ALTER TABLE `connectors` ADD `created_by` text;--> statement-breakpoint
ALTER TABLE `connectors` ADD `creator_removed_at` integer;--> statement-breakpoint
ALTER TABLE `webhook_subscriptions` ADD `created_by` text;--> statement-breakpoint
ALTER TABLE `webhook_subscriptions` ADD `creator_removed_at` integer;
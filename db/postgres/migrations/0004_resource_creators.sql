ALTER TABLE "connectors" ADD COLUMN "created_by" text;--> statement-breakpoint
ALTER TABLE "connectors" ADD COLUMN "creator_removed_at" bigint;--> statement-breakpoint
ALTER TABLE "webhook_subscriptions" ADD COLUMN "created_by" text;--> statement-breakpoint
ALTER TABLE "webhook_subscriptions" ADD COLUMN "creator_removed_at" bigint;
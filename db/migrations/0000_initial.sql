CREATE TABLE `api_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`key_hash` text NOT NULL,
	`key_prefix` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer,
	`revoked_at` integer,
	`rate_limit` integer,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "api_keys_rate_limit_positive" CHECK("api_keys"."rate_limit" IS NULL OR "api_keys"."rate_limit" >= 1)
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_key_hash_unique` ON `api_keys` (`key_hash`);--> statement-breakpoint
CREATE INDEX `api_keys_tenant_id_idx` ON `api_keys` (`tenant_id`);--> statement-breakpoint
CREATE TABLE `assets` (
	`tenant_id` text NOT NULL,
	`id` text NOT NULL,
	`position` integer NOT NULL,
	`url` text NOT NULL,
	`alt_text` text NOT NULL,
	`mime_type` text NOT NULL,
	`width` integer,
	`height` integer,
	PRIMARY KEY(`tenant_id`, `id`),
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `portfolio_items` (
	`tenant_id` text NOT NULL,
	`kind` text NOT NULL,
	`position` integer NOT NULL,
	`id` text,
	`slug` text,
	`published` integer NOT NULL,
	`source_json` text NOT NULL,
	`rendered_json` text NOT NULL,
	`summary_json` text,
	PRIMARY KEY(`tenant_id`, `kind`, `position`),
	FOREIGN KEY (`tenant_id`) REFERENCES `portfolios`(`tenant_id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "portfolio_items_published_boolean" CHECK("portfolio_items"."published" IN (0, 1)),
	CONSTRAINT "portfolio_items_kind_known" CHECK("kind" IN ('outcome', 'post', 'page', 'experience', 'skill', 'stat', 'award', 'credential', 'testimonial', 'link'))
);
--> statement-breakpoint
CREATE UNIQUE INDEX `portfolio_items_slug_unique` ON `portfolio_items` (`tenant_id`,`kind`,`slug`);--> statement-breakpoint
CREATE UNIQUE INDEX `portfolio_items_id_unique` ON `portfolio_items` (`tenant_id`,`kind`,`id`);--> statement-breakpoint
CREATE INDEX `portfolio_items_listing_idx` ON `portfolio_items` (`tenant_id`,`kind`,`published`,`position`);--> statement-breakpoint
CREATE TABLE `portfolios` (
	`tenant_id` text PRIMARY KEY NOT NULL,
	`published` integer NOT NULL,
	`profile_source_json` text NOT NULL,
	`profile_rendered_json` text NOT NULL,
	`document_json` text NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`tenant_id`) REFERENCES `tenants`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "portfolios_published_boolean" CHECK("portfolios"."published" IN (0, 1))
);
--> statement-breakpoint
CREATE TABLE `rate_limit_counters` (
	`bucket` text NOT NULL,
	`window_start` integer NOT NULL,
	`count` integer NOT NULL,
	PRIMARY KEY(`bucket`, `window_start`)
);
--> statement-breakpoint
CREATE TABLE `tenants` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`created_at` integer NOT NULL
);

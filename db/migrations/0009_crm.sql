CREATE TABLE `companies` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`name` text NOT NULL,
	`domain` text,
	`description` text,
	`version` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "companies_name_length" CHECK(length("name") BETWEEN 1 AND 200),
	CONSTRAINT "companies_domain_length" CHECK("domain" IS NULL OR length("domain") <= 253),
	CONSTRAINT "companies_description_length" CHECK("description" IS NULL OR length("description") <= 2000),
	CONSTRAINT "companies_version_positive" CHECK("companies"."version" >= 1)
);
--> statement-breakpoint
CREATE UNIQUE INDEX `companies_workspace_id_id_unique` ON `companies` (`workspace_id`,`id`);--> statement-breakpoint
CREATE INDEX `companies_created_at_idx` ON `companies` (`workspace_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `companies_updated_at_idx` ON `companies` (`workspace_id`,`updated_at`,`id`);--> statement-breakpoint
CREATE INDEX `companies_name_idx` ON `companies` (`workspace_id`,`name`,`id`);--> statement-breakpoint
CREATE TABLE `contacts` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`name` text NOT NULL,
	`email` text,
	`phone` text,
	`company_id` text,
	`version` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`workspace_id`,`company_id`) REFERENCES `companies`(`workspace_id`,`id`) ON UPDATE no action ON DELETE no action,
	CONSTRAINT "contacts_name_length" CHECK(length("name") BETWEEN 1 AND 200),
	CONSTRAINT "contacts_email_length" CHECK("email" IS NULL OR length("email") <= 254),
	CONSTRAINT "contacts_phone_length" CHECK("phone" IS NULL OR length("phone") <= 40),
	CONSTRAINT "contacts_version_positive" CHECK("contacts"."version" >= 1)
);
--> statement-breakpoint
CREATE UNIQUE INDEX `contacts_workspace_id_id_unique` ON `contacts` (`workspace_id`,`id`);--> statement-breakpoint
CREATE INDEX `contacts_created_at_idx` ON `contacts` (`workspace_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `contacts_updated_at_idx` ON `contacts` (`workspace_id`,`updated_at`,`id`);--> statement-breakpoint
CREATE INDEX `contacts_name_idx` ON `contacts` (`workspace_id`,`name`,`id`);--> statement-breakpoint
CREATE INDEX `contacts_company_id_idx` ON `contacts` (`workspace_id`,`company_id`,`created_at`,`id`);--> statement-breakpoint
CREATE TABLE `deal_contacts` (
	`workspace_id` text NOT NULL,
	`deal_id` text NOT NULL,
	`contact_id` text NOT NULL,
	PRIMARY KEY(`deal_id`, `contact_id`),
	FOREIGN KEY (`workspace_id`,`deal_id`) REFERENCES `deals`(`workspace_id`,`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`workspace_id`,`contact_id`) REFERENCES `contacts`(`workspace_id`,`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `deal_contacts_contact_id_idx` ON `deal_contacts` (`workspace_id`,`contact_id`);--> statement-breakpoint
CREATE TABLE `deals` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`title` text NOT NULL,
	`stage` text NOT NULL,
	`amount_minor` integer NOT NULL,
	`currency` text NOT NULL,
	`owner_id` text NOT NULL,
	`company_id` text,
	`contact_ids` text NOT NULL,
	`expected_close_on` text,
	`version` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`workspace_id`,`owner_id`) REFERENCES `users`(`workspace_id`,`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`workspace_id`,`company_id`) REFERENCES `companies`(`workspace_id`,`id`) ON UPDATE no action ON DELETE no action,
	CONSTRAINT "deals_title_length" CHECK(length("title") BETWEEN 1 AND 200),
	CONSTRAINT "deals_stage_known" CHECK("stage" IN ('lead', 'qualified', 'proposal', 'negotiation', 'won', 'lost')),
	CONSTRAINT "deals_amount_minor_not_negative" CHECK("deals"."amount_minor" >= 0),
	CONSTRAINT "deals_currency_code" CHECK(length("currency") = 3 AND upper("currency") = "currency"),
	CONSTRAINT "deals_version_positive" CHECK("deals"."version" >= 1)
);
--> statement-breakpoint
CREATE UNIQUE INDEX `deals_workspace_id_id_unique` ON `deals` (`workspace_id`,`id`);--> statement-breakpoint
CREATE INDEX `deals_created_at_idx` ON `deals` (`workspace_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `deals_updated_at_idx` ON `deals` (`workspace_id`,`updated_at`,`id`);--> statement-breakpoint
CREATE INDEX `deals_title_idx` ON `deals` (`workspace_id`,`title`,`id`);--> statement-breakpoint
CREATE INDEX `deals_amount_minor_idx` ON `deals` (`workspace_id`,`amount_minor`,`id`);--> statement-breakpoint
CREATE INDEX `deals_stage_idx` ON `deals` (`workspace_id`,`stage`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `deals_owner_id_idx` ON `deals` (`workspace_id`,`owner_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `deals_company_id_idx` ON `deals` (`workspace_id`,`company_id`,`created_at`,`id`);
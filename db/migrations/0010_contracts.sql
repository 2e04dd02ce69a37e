CREATE TABLE `contracts` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`title` text NOT NULL,
	`status` text NOT NULL,
	`company_id` text,
	`deal_id` text,
	`amount_minor` integer,
	`currency` text,
	`body` text,
	`expires_on` text NOT NULL,
	`expires_at` integer NOT NULL,
	`sent_at` integer,
	`signed_at` integer,
	`declined_at` integer,
	`expired_at` integer,
	`version` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`workspace_id`,`company_id`) REFERENCES `companies`(`workspace_id`,`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`workspace_id`,`deal_id`) REFERENCES `deals`(`workspace_id`,`id`) ON UPDATE no action ON DELETE no action,
	CONSTRAINT "contracts_title_length" CHECK(length("title") BETWEEN 1 AND 200),
	CONSTRAINT "contracts_body_length" CHECK("body" IS NULL OR length("body") <= 20000),
	CONSTRAINT "contracts_status_known" CHECK("status" IN ('draft', 'sent', 'signed', 'declined', 'expired')),
	CONSTRAINT "contracts_names_company_or_deal" CHECK("contracts"."company_id" IS NOT NULL OR "contracts"."deal_id" IS NOT NULL),
	CONSTRAINT "contracts_value_complete" CHECK(("contracts"."amount_minor" IS NULL) = ("contracts"."currency" IS NULL)),
	CONSTRAINT "contracts_amount_minor_not_negative" CHECK("contracts"."amount_minor" IS NULL OR "contracts"."amount_minor" >= 0),
	CONSTRAINT "contracts_currency_code" CHECK("currency" IS NULL OR (length("currency") = 3 AND upper("currency") = "currency")),
	CONSTRAINT "contracts_version_positive" CHECK("contracts"."version" >= 1)
);
--> statement-breakpoint
CREATE UNIQUE INDEX `contracts_workspace_id_id_unique` ON `contracts` (`workspace_id`,`id`);--> statement-breakpoint
CREATE INDEX `contracts_created_at_idx` ON `contracts` (`workspace_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `contracts_title_idx` ON `contracts` (`workspace_id`,`title`,`id`);--> statement-breakpoint
CREATE INDEX `contracts_expires_on_idx` ON `contracts` (`workspace_id`,`expires_on`,`id`);--> statement-breakpoint
CREATE INDEX `contracts_status_idx` ON `contracts` (`workspace_id`,`status`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `contracts_company_id_idx` ON `contracts` (`workspace_id`,`company_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `contracts_deal_id_idx` ON `contracts` (`workspace_id`,`deal_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `contracts_sent_expires_at_idx` ON `contracts` (`status`,`expires_at`);
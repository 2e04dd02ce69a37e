CREATE TABLE "ai_spend_entries" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"day" text NOT NULL,
	"operation" text NOT NULL,
	"model" text NOT NULL,
	"request_id" text NOT NULL,
	"state" text NOT NULL,
	"reserved_millicents" bigint NOT NULL,
	"actual_millicents" bigint,
	"prompt_tokens" bigint,
	"completion_tokens" bigint,
	"created_at" bigint NOT NULL,
	"closed_at" bigint,
	CONSTRAINT "ai_spend_entries_state_known" CHECK ("state" IN ('reserved', 'settled', 'released')),
	CONSTRAINT "ai_spend_entries_reserved_not_negative" CHECK ("ai_spend_entries"."reserved_millicents" >= 0),
	CONSTRAINT "ai_spend_entries_settled_has_actual" CHECK (("ai_spend_entries"."state" = 'settled') = ("ai_spend_entries"."actual_millicents" IS NOT NULL))
);
--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"key_hash" text NOT NULL,
	"key_prefix" text NOT NULL,
	"created_at" bigint NOT NULL,
	"expires_at" bigint,
	"revoked_at" bigint,
	"rate_limit" bigint,
	CONSTRAINT "api_keys_key_hash_unique" UNIQUE("key_hash"),
	CONSTRAINT "api_keys_rate_limit_positive" CHECK ("api_keys"."rate_limit" IS NULL OR "api_keys"."rate_limit" >= 1)
);
--> statement-breakpoint
CREATE TABLE "assets" (
	"tenant_id" text NOT NULL,
	"id" text NOT NULL,
	"position" bigint NOT NULL,
	"url" text NOT NULL,
	"alt_text" text NOT NULL,
	"mime_type" text NOT NULL,
	"width" bigint,
	"height" bigint,
	CONSTRAINT "assets_tenant_id_id_pk" PRIMARY KEY("tenant_id","id")
);
--> statement-breakpoint
CREATE TABLE "collection_revisions" (
	"workspace_id" text NOT NULL,
	"collection" text NOT NULL,
	"revision" bigint NOT NULL,
	CONSTRAINT "collection_revisions_workspace_id_collection_pk" PRIMARY KEY("workspace_id","collection")
);
--> statement-breakpoint
CREATE TABLE "companies" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"name" text NOT NULL,
	"domain" text,
	"description" text,
	"version" bigint NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	CONSTRAINT "companies_workspace_id_id_unique" UNIQUE("workspace_id","id"),
	CONSTRAINT "companies_name_length" CHECK (length("name") BETWEEN 1 AND 200),
	CONSTRAINT "companies_domain_length" CHECK ("domain" IS NULL OR length("domain") <= 253),
	CONSTRAINT "companies_description_length" CHECK ("description" IS NULL OR length("description") <= 2000),
	CONSTRAINT "companies_version_positive" CHECK ("companies"."version" >= 1)
);
--> statement-breakpoint
CREATE TABLE "connectors" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"kind" text NOT NULL,
	"name" text NOT NULL,
	"status" text NOT NULL,
	"sealed_credential" text,
	"credential_hint" text,
	"credential_expires_at" bigint,
	"account_login" text,
	"connected_at" bigint,
	"disconnected_at" bigint,
	"expired_at" bigint,
	"version" bigint NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	CONSTRAINT "connectors_workspace_id_id_unique" UNIQUE("workspace_id","id"),
	CONSTRAINT "connectors_kind_known" CHECK ("kind" IN ('github')),
	CONSTRAINT "connectors_status_known" CHECK ("status" IN ('not_connected', 'connected', 'expired', 'disconnected')),
	CONSTRAINT "connectors_name_length" CHECK (length("name") BETWEEN 1 AND 120),
	CONSTRAINT "connectors_credential_while_usable" CHECK (("status" = 'connected' AND "sealed_credential" IS NOT NULL) OR ("status" IN ('not_connected', 'disconnected') AND "sealed_credential" IS NULL) OR "status" = 'expired'),
	CONSTRAINT "connectors_version_positive" CHECK ("connectors"."version" >= 1)
);
--> statement-breakpoint
CREATE TABLE "contacts" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"name" text NOT NULL,
	"email" text,
	"phone" text,
	"company_id" text,
	"version" bigint NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	CONSTRAINT "contacts_workspace_id_id_unique" UNIQUE("workspace_id","id"),
	CONSTRAINT "contacts_name_length" CHECK (length("name") BETWEEN 1 AND 200),
	CONSTRAINT "contacts_email_length" CHECK ("email" IS NULL OR length("email") <= 254),
	CONSTRAINT "contacts_phone_length" CHECK ("phone" IS NULL OR length("phone") <= 40),
	CONSTRAINT "contacts_version_positive" CHECK ("contacts"."version" >= 1)
);
--> statement-breakpoint
CREATE TABLE "contracts" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"title" text NOT NULL,
	"status" text NOT NULL,
	"company_id" text,
	"deal_id" text,
	"amount_minor" bigint,
	"currency" text,
	"body" text,
	"expires_on" text NOT NULL,
	"expires_at" bigint NOT NULL,
	"sent_at" bigint,
	"signed_at" bigint,
	"declined_at" bigint,
	"expired_at" bigint,
	"version" bigint NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	CONSTRAINT "contracts_workspace_id_id_unique" UNIQUE("workspace_id","id"),
	CONSTRAINT "contracts_title_length" CHECK (length("title") BETWEEN 1 AND 200),
	CONSTRAINT "contracts_body_length" CHECK ("body" IS NULL OR length("body") <= 20000),
	CONSTRAINT "contracts_status_known" CHECK ("status" IN ('draft', 'sent', 'signed', 'declined', 'expired')),
	CONSTRAINT "contracts_names_company_or_deal" CHECK ("contracts"."company_id" IS NOT NULL OR "contracts"."deal_id" IS NOT NULL),
	CONSTRAINT "contracts_value_complete" CHECK (("contracts"."amount_minor" IS NULL) = ("contracts"."currency" IS NULL)),
	CONSTRAINT "contracts_amount_minor_not_negative" CHECK ("contracts"."amount_minor" IS NULL OR "contracts"."amount_minor" >= 0),
	CONSTRAINT "contracts_currency_code" CHECK ("currency" IS NULL OR (length("currency") = 3 AND upper("currency") = "currency")),
	CONSTRAINT "contracts_version_positive" CHECK ("contracts"."version" >= 1)
);
--> statement-breakpoint
CREATE TABLE "deal_contacts" (
	"workspace_id" text NOT NULL,
	"deal_id" text NOT NULL,
	"contact_id" text NOT NULL,
	CONSTRAINT "deal_contacts_deal_id_contact_id_pk" PRIMARY KEY("deal_id","contact_id")
);
--> statement-breakpoint
CREATE TABLE "deals" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"title" text NOT NULL,
	"stage" text NOT NULL,
	"amount_minor" bigint NOT NULL,
	"currency" text NOT NULL,
	"owner_id" text NOT NULL,
	"company_id" text,
	"contact_ids" text NOT NULL,
	"expected_close_on" text,
	"version" bigint NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	CONSTRAINT "deals_workspace_id_id_unique" UNIQUE("workspace_id","id"),
	CONSTRAINT "deals_title_length" CHECK (length("title") BETWEEN 1 AND 200),
	CONSTRAINT "deals_stage_known" CHECK ("stage" IN ('lead', 'qualified', 'proposal', 'negotiation', 'won', 'lost')),
	CONSTRAINT "deals_amount_minor_not_negative" CHECK ("deals"."amount_minor" >= 0),
	CONSTRAINT "deals_currency_code" CHECK (length("currency") = 3 AND upper("currency") = "currency"),
	CONSTRAINT "deals_version_positive" CHECK ("deals"."version" >= 1)
);
--> statement-breakpoint
CREATE TABLE "events" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"type" text NOT NULL,
	"occurred_at" bigint NOT NULL,
	"payload" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "idempotency_claims" (
	"workspace_id" text NOT NULL,
	"key" text NOT NULL,
	"claimed_until" bigint NOT NULL,
	CONSTRAINT "idempotency_claims_workspace_id_key_pk" PRIMARY KEY("workspace_id","key")
);
--> statement-breakpoint
CREATE TABLE "idempotency_keys" (
	"workspace_id" text NOT NULL,
	"key" text NOT NULL,
	"method" text NOT NULL,
	"path" text NOT NULL,
	"status" bigint NOT NULL,
	"headers" text NOT NULL,
	"body" text NOT NULL,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL,
	CONSTRAINT "idempotency_keys_workspace_id_key_pk" PRIMARY KEY("workspace_id","key")
);
--> statement-breakpoint
CREATE TABLE "imported_issues" (
	"workspace_id" text NOT NULL,
	"issue_id" bigint NOT NULL,
	"repository" text NOT NULL,
	"issue_number" bigint NOT NULL,
	"task_id" text NOT NULL,
	"issue_title" text NOT NULL,
	"issue_state" text NOT NULL,
	"imported_at" bigint NOT NULL,
	CONSTRAINT "imported_issues_workspace_id_issue_id_pk" PRIMARY KEY("workspace_id","issue_id"),
	CONSTRAINT "imported_issues_state_known" CHECK ("issue_state" IN ('open', 'closed'))
);
--> statement-breakpoint
CREATE TABLE "oauth_clients" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"name" text NOT NULL,
	"redirect_uris" text NOT NULL,
	"scopes" text NOT NULL,
	"secret_hash" text,
	"created_at" bigint NOT NULL,
	CONSTRAINT "oauth_clients_name_length" CHECK (length("oauth_clients"."name") BETWEEN 1 AND 120)
);
--> statement-breakpoint
CREATE TABLE "oauth_records" (
	"model" text NOT NULL,
	"id_hash" text NOT NULL,
	"payload" text NOT NULL,
	"grant_id" text,
	"client_id" text,
	"account_id" text,
	"uid" text,
	"expires_at" bigint,
	"consumed_at" bigint,
	CONSTRAINT "oauth_records_model_id_hash_pk" PRIMARY KEY("model","id_hash")
);
--> statement-breakpoint
CREATE TABLE "personal_access_tokens" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"user_id" text NOT NULL,
	"token_hash" text NOT NULL,
	"token_prefix" text NOT NULL,
	"scopes" text NOT NULL,
	"created_at" bigint NOT NULL,
	"expires_at" bigint,
	"revoked_at" bigint,
	"rotated_to" text,
	CONSTRAINT "personal_access_tokens_token_hash_unique" UNIQUE("token_hash")
);
--> statement-breakpoint
CREATE TABLE "portfolio_items" (
	"tenant_id" text NOT NULL,
	"kind" text NOT NULL,
	"position" bigint NOT NULL,
	"id" text,
	"slug" text,
	"published" bigint NOT NULL,
	"source_json" text NOT NULL,
	"rendered_json" text NOT NULL,
	"summary_json" text,
	CONSTRAINT "portfolio_items_tenant_id_kind_position_pk" PRIMARY KEY("tenant_id","kind","position"),
	CONSTRAINT "portfolio_items_slug_unique" UNIQUE("tenant_id","kind","slug"),
	CONSTRAINT "portfolio_items_id_unique" UNIQUE("tenant_id","kind","id"),
	CONSTRAINT "portfolio_items_published_boolean" CHECK ("portfolio_items"."published" IN (0, 1)),
	CONSTRAINT "portfolio_items_kind_known" CHECK ("kind" IN ('outcome', 'post', 'page', 'experience', 'skill', 'stat', 'award', 'credential', 'testimonial', 'link'))
);
--> statement-breakpoint
CREATE TABLE "portfolios" (
	"tenant_id" text PRIMARY KEY NOT NULL,
	"published" bigint NOT NULL,
	"profile_source_json" text NOT NULL,
	"profile_rendered_json" text NOT NULL,
	"document_json" text NOT NULL,
	"updated_at" bigint NOT NULL,
	"revision" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "portfolios_published_boolean" CHECK ("portfolios"."published" IN (0, 1))
);
--> statement-breakpoint
CREATE TABLE "projects" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"name" text NOT NULL,
	"description" text,
	"status" text NOT NULL,
	"version" bigint NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	CONSTRAINT "projects_workspace_id_id_unique" UNIQUE("workspace_id","id"),
	CONSTRAINT "projects_name_length" CHECK (length("name") BETWEEN 1 AND 120),
	CONSTRAINT "projects_description_length" CHECK ("description" IS NULL OR length("description") <= 2000),
	CONSTRAINT "projects_status_known" CHECK ("status" IN ('ACTIVE', 'ARCHIVED')),
	CONSTRAINT "projects_version_positive" CHECK ("projects"."version" >= 1)
);
--> statement-breakpoint
CREATE TABLE "quota_counters" (
	"workspace_id" text NOT NULL,
	"period" text NOT NULL,
	"count" bigint NOT NULL,
	CONSTRAINT "quota_counters_workspace_id_period_pk" PRIMARY KEY("workspace_id","period")
);
--> statement-breakpoint
CREATE TABLE "rate_limit_counters" (
	"bucket" text NOT NULL,
	"window_start" bigint NOT NULL,
	"count" bigint NOT NULL,
	CONSTRAINT "rate_limit_counters_bucket_window_start_pk" PRIMARY KEY("bucket","window_start")
);
--> statement-breakpoint
CREATE TABLE "tasks" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"project_id" text NOT NULL,
	"title" text NOT NULL,
	"status" text NOT NULL,
	"priority" text NOT NULL,
	"priority_rank" bigint NOT NULL,
	"due_on" bigint,
	"assignee_id" text,
	"version" bigint NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	"completed_at" bigint,
	CONSTRAINT "tasks_title_length" CHECK (length("title") BETWEEN 1 AND 200),
	CONSTRAINT "tasks_status_known" CHECK ("status" IN ('TODO', 'IN_PROGRESS', 'BLOCKED', 'DONE')),
	CONSTRAINT "tasks_priority_rank_matches" CHECK (("priority" = 'LOW' AND "priority_rank" = 1) OR ("priority" = 'MEDIUM' AND "priority_rank" = 2) OR ("priority" = 'HIGH' AND "priority_rank" = 3)),
	CONSTRAINT "tasks_version_positive" CHECK ("tasks"."version" >= 1)
);
--> statement-breakpoint
CREATE TABLE "tenants" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"role" text NOT NULL,
	"name" text,
	"email" text,
	"created_at" bigint NOT NULL,
	"sessions_valid_after" bigint DEFAULT 0 NOT NULL,
	CONSTRAINT "users_workspace_id_id_unique" UNIQUE("workspace_id","id"),
	CONSTRAINT "users_role_known" CHECK ("role" IN ('owner', 'admin', 'member'))
);
--> statement-breakpoint
CREATE TABLE "webhook_attempts" (
	"delivery_id" text NOT NULL,
	"number" bigint NOT NULL,
	"attempted_at" bigint NOT NULL,
	"duration_ms" bigint NOT NULL,
	"status_code" bigint,
	"error_code" text,
	"error_message" text,
	"succeeded" boolean NOT NULL,
	"next_attempt_at" bigint,
	CONSTRAINT "webhook_attempts_delivery_id_number_pk" PRIMARY KEY("delivery_id","number")
);
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"id" text PRIMARY KEY NOT NULL,
	"subscription_id" text NOT NULL,
	"workspace_id" text NOT NULL,
	"event_id" text NOT NULL,
	"event_type" text NOT NULL,
	"replay" boolean NOT NULL,
	"status" text NOT NULL,
	"attempt_count" bigint DEFAULT 0 NOT NULL,
	"next_attempt_at" bigint,
	"lease_owner" text,
	"lease_expires_at" bigint,
	"created_at" bigint NOT NULL,
	"completed_at" bigint,
	CONSTRAINT "webhook_deliveries_status_known" CHECK ("status" IN ('PENDING', 'SUCCEEDED', 'FAILED', 'CANCELLED')),
	CONSTRAINT "webhook_deliveries_pending_has_next" CHECK (("webhook_deliveries"."status" = 'PENDING') = ("webhook_deliveries"."next_attempt_at" IS NOT NULL))
);
--> statement-breakpoint
CREATE TABLE "webhook_subscriptions" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"url" text NOT NULL,
	"description" text,
	"event_types" text NOT NULL,
	"status" text NOT NULL,
	"disabled_code" text,
	"disabled_message" text,
	"disabled_at" bigint,
	"consecutive_failed_events" bigint DEFAULT 0 NOT NULL,
	"signing_key_version" bigint NOT NULL,
	"sealed_secret" text NOT NULL,
	"sealed_previous_secret" text,
	"previous_secret_expires_at" bigint,
	"version" bigint NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	CONSTRAINT "webhook_subscriptions_status_known" CHECK ("status" IN ('ACTIVE', 'DISABLED')),
	CONSTRAINT "webhook_subscriptions_disabled_reason" CHECK (("webhook_subscriptions"."status" = 'ACTIVE' AND "webhook_subscriptions"."disabled_code" IS NULL) OR ("webhook_subscriptions"."status" = 'DISABLED' AND "webhook_subscriptions"."disabled_code" IS NOT NULL)),
	CONSTRAINT "webhook_subscriptions_previous_secret" CHECK (("webhook_subscriptions"."sealed_previous_secret" IS NULL) = ("webhook_subscriptions"."previous_secret_expires_at" IS NULL))
);
--> statement-breakpoint
CREATE TABLE "workspaces" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"plan" text NOT NULL,
	"read_per_minute_override" bigint,
	"write_per_minute_override" bigint,
	"ai_per_minute_override" bigint,
	"monthly_quota_override" bigint,
	"ai_daily_spend_cap_cents_override" bigint,
	"webhook_retry_delays_seconds_override" text,
	"created_at" bigint NOT NULL,
	CONSTRAINT "workspaces_plan_known" CHECK ("plan" IN ('free', 'pro', 'team', 'business', 'enterprise')),
	CONSTRAINT "workspaces_name_not_empty" CHECK (length("workspaces"."name") >= 1),
	CONSTRAINT "workspaces_overrides_in_range" CHECK (coalesce("workspaces"."read_per_minute_override", 1) >= 1 AND coalesce("workspaces"."write_per_minute_override", 1) >= 1
        AND coalesce("workspaces"."ai_per_minute_override", 1) >= 1 AND coalesce("workspaces"."monthly_quota_override", 0) >= 0
        AND coalesce("workspaces"."ai_daily_spend_cap_cents_override", 0) >= 0)
);
--> statement-breakpoint
ALTER TABLE "ai_spend_entries" ADD CONSTRAINT "ai_spend_entries_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "assets" ADD CONSTRAINT "assets_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "collection_revisions" ADD CONSTRAINT "collection_revisions_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "companies" ADD CONSTRAINT "companies_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "connectors" ADD CONSTRAINT "connectors_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "contacts" ADD CONSTRAINT "contacts_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "contacts" ADD CONSTRAINT "contacts_workspace_id_company_id_companies_workspace_id_id_fk" FOREIGN KEY ("workspace_id","company_id") REFERENCES "public"."companies"("workspace_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "contracts" ADD CONSTRAINT "contracts_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "contracts" ADD CONSTRAINT "contracts_workspace_id_company_id_companies_workspace_id_id_fk" FOREIGN KEY ("workspace_id","company_id") REFERENCES "public"."companies"("workspace_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "contracts" ADD CONSTRAINT "contracts_workspace_id_deal_id_deals_workspace_id_id_fk" FOREIGN KEY ("workspace_id","deal_id") REFERENCES "public"."deals"("workspace_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "deal_contacts" ADD CONSTRAINT "deal_contacts_workspace_id_deal_id_deals_workspace_id_id_fk" FOREIGN KEY ("workspace_id","deal_id") REFERENCES "public"."deals"("workspace_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "deal_contacts" ADD CONSTRAINT "deal_contacts_workspace_id_contact_id_contacts_workspace_id_id_fk" FOREIGN KEY ("workspace_id","contact_id") REFERENCES "public"."contacts"("workspace_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "deals" ADD CONSTRAINT "deals_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "deals" ADD CONSTRAINT "deals_workspace_id_owner_id_users_workspace_id_id_fk" FOREIGN KEY ("workspace_id","owner_id") REFERENCES "public"."users"("workspace_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "deals" ADD CONSTRAINT "deals_workspace_id_company_id_companies_workspace_id_id_fk" FOREIGN KEY ("workspace_id","company_id") REFERENCES "public"."companies"("workspace_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "events" ADD CONSTRAINT "events_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "idempotency_claims" ADD CONSTRAINT "idempotency_claims_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "idempotency_keys" ADD CONSTRAINT "idempotency_keys_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "imported_issues" ADD CONSTRAINT "imported_issues_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "oauth_clients" ADD CONSTRAINT "oauth_clients_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "personal_access_tokens" ADD CONSTRAINT "personal_access_tokens_workspace_id_user_id_users_workspace_id_id_fk" FOREIGN KEY ("workspace_id","user_id") REFERENCES "public"."users"("workspace_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "portfolio_items" ADD CONSTRAINT "portfolio_items_tenant_id_portfolios_tenant_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."portfolios"("tenant_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "portfolios" ADD CONSTRAINT "portfolios_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "projects" ADD CONSTRAINT "projects_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "quota_counters" ADD CONSTRAINT "quota_counters_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_workspace_id_project_id_projects_workspace_id_id_fk" FOREIGN KEY ("workspace_id","project_id") REFERENCES "public"."projects"("workspace_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_workspace_id_assignee_id_users_workspace_id_id_fk" FOREIGN KEY ("workspace_id","assignee_id") REFERENCES "public"."users"("workspace_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "users" ADD CONSTRAINT "users_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_attempts" ADD CONSTRAINT "webhook_attempts_delivery_id_webhook_deliveries_id_fk" FOREIGN KEY ("delivery_id") REFERENCES "public"."webhook_deliveries"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_subscription_id_webhook_subscriptions_id_fk" FOREIGN KEY ("subscription_id") REFERENCES "public"."webhook_subscriptions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_event_id_events_id_fk" FOREIGN KEY ("event_id") REFERENCES "public"."events"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_subscriptions" ADD CONSTRAINT "webhook_subscriptions_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "ai_spend_entries_workspace_day_idx" ON "ai_spend_entries" USING btree ("workspace_id","day");--> statement-breakpoint
CREATE INDEX "api_keys_tenant_id_idx" ON "api_keys" USING btree ("tenant_id");--> statement-breakpoint
CREATE INDEX "companies_created_at_idx" ON "companies" USING btree ("workspace_id","created_at","id");--> statement-breakpoint
CREATE INDEX "companies_updated_at_idx" ON "companies" USING btree ("workspace_id","updated_at","id");--> statement-breakpoint
CREATE INDEX "companies_name_idx" ON "companies" USING btree ("workspace_id","name","id");--> statement-breakpoint
CREATE INDEX "connectors_created_at_idx" ON "connectors" USING btree ("workspace_id","created_at","id");--> statement-breakpoint
CREATE INDEX "connectors_updated_at_idx" ON "connectors" USING btree ("workspace_id","updated_at","id");--> statement-breakpoint
CREATE INDEX "connectors_name_idx" ON "connectors" USING btree ("workspace_id","name","id");--> statement-breakpoint
CREATE INDEX "connectors_kind_idx" ON "connectors" USING btree ("workspace_id","kind","created_at","id");--> statement-breakpoint
CREATE INDEX "contacts_created_at_idx" ON "contacts" USING btree ("workspace_id","created_at","id");--> statement-breakpoint
CREATE INDEX "contacts_updated_at_idx" ON "contacts" USING btree ("workspace_id","updated_at","id");--> statement-breakpoint
CREATE INDEX "contacts_name_idx" ON "contacts" USING btree ("workspace_id","name","id");--> statement-breakpoint
CREATE INDEX "contacts_company_id_idx" ON "contacts" USING btree ("workspace_id","company_id","created_at","id");--> statement-breakpoint
CREATE INDEX "contracts_created_at_idx" ON "contracts" USING btree ("workspace_id","created_at","id");--> statement-breakpoint
CREATE INDEX "contracts_title_idx" ON "contracts" USING btree ("workspace_id","title","id");--> statement-breakpoint
CREATE INDEX "contracts_expires_on_idx" ON "contracts" USING btree ("workspace_id","expires_on","id");--> statement-breakpoint
CREATE INDEX "contracts_status_idx" ON "contracts" USING btree ("workspace_id","status","created_at","id");--> statement-breakpoint
CREATE INDEX "contracts_company_id_idx" ON "contracts" USING btree ("workspace_id","company_id","created_at","id");--> statement-breakpoint
CREATE INDEX "contracts_deal_id_idx" ON "contracts" USING btree ("workspace_id","deal_id","created_at","id");--> statement-breakpoint
CREATE INDEX "contracts_sent_expires_at_idx" ON "contracts" USING btree ("status","expires_at");--> statement-breakpoint
CREATE INDEX "deal_contacts_contact_id_idx" ON "deal_contacts" USING btree ("workspace_id","contact_id");--> statement-breakpoint
CREATE INDEX "deals_created_at_idx" ON "deals" USING btree ("workspace_id","created_at","id");--> statement-breakpoint
CREATE INDEX "deals_updated_at_idx" ON "deals" USING btree ("workspace_id","updated_at","id");--> statement-breakpoint
CREATE INDEX "deals_title_idx" ON "deals" USING btree ("workspace_id","title","id");--> statement-breakpoint
CREATE INDEX "deals_amount_minor_idx" ON "deals" USING btree ("workspace_id","amount_minor","id");--> statement-breakpoint
CREATE INDEX "deals_stage_idx" ON "deals" USING btree ("workspace_id","stage","created_at","id");--> statement-breakpoint
CREATE INDEX "deals_owner_id_idx" ON "deals" USING btree ("workspace_id","owner_id","created_at","id");--> statement-breakpoint
CREATE INDEX "deals_company_id_idx" ON "deals" USING btree ("workspace_id","company_id","created_at","id");--> statement-breakpoint
CREATE INDEX "deals_pipeline_idx" ON "deals" USING btree ("workspace_id","created_at","stage","currency","amount_minor","owner_id");--> statement-breakpoint
CREATE INDEX "events_occurred_at_idx" ON "events" USING btree ("occurred_at");--> statement-breakpoint
CREATE INDEX "events_workspace_id_idx" ON "events" USING btree ("workspace_id","occurred_at");--> statement-breakpoint
CREATE INDEX "idempotency_keys_expires_at_idx" ON "idempotency_keys" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "oauth_clients_workspace_id_idx" ON "oauth_clients" USING btree ("workspace_id","created_at");--> statement-breakpoint
CREATE INDEX "oauth_records_grant_id_idx" ON "oauth_records" USING btree ("grant_id");--> statement-breakpoint
CREATE INDEX "oauth_records_client_id_idx" ON "oauth_records" USING btree ("client_id");--> statement-breakpoint
CREATE INDEX "oauth_records_account_id_idx" ON "oauth_records" USING btree ("account_id");--> statement-breakpoint
CREATE INDEX "oauth_records_uid_idx" ON "oauth_records" USING btree ("uid");--> statement-breakpoint
CREATE INDEX "oauth_records_expires_at_idx" ON "oauth_records" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "personal_access_tokens_workspace_id_idx" ON "personal_access_tokens" USING btree ("workspace_id","created_at");--> statement-breakpoint
CREATE INDEX "portfolio_items_listing_idx" ON "portfolio_items" USING btree ("tenant_id","kind","published","position");--> statement-breakpoint
CREATE INDEX "projects_created_at_idx" ON "projects" USING btree ("workspace_id","created_at","id");--> statement-breakpoint
CREATE INDEX "projects_updated_at_idx" ON "projects" USING btree ("workspace_id","updated_at","id");--> statement-breakpoint
CREATE INDEX "projects_name_idx" ON "projects" USING btree ("workspace_id","name","id");--> statement-breakpoint
CREATE INDEX "tasks_project_id_idx" ON "tasks" USING btree ("workspace_id","project_id");--> statement-breakpoint
CREATE INDEX "tasks_assignee_id_idx" ON "tasks" USING btree ("workspace_id","assignee_id");--> statement-breakpoint
CREATE INDEX "tasks_created_at_idx" ON "tasks" USING btree ("workspace_id","created_at","id");--> statement-breakpoint
CREATE INDEX "tasks_updated_at_idx" ON "tasks" USING btree ("workspace_id","updated_at","id");--> statement-breakpoint
CREATE INDEX "tasks_title_idx" ON "tasks" USING btree ("workspace_id","title","id");--> statement-breakpoint
CREATE INDEX "tasks_priority_rank_idx" ON "tasks" USING btree ("workspace_id","priority_rank","id");--> statement-breakpoint
CREATE INDEX "tasks_due_on_idx" ON "tasks" USING btree ("workspace_id",(CASE WHEN "due_on" IS NULL THEN 9007199254740991 ELSE "due_on" END),"id");--> statement-breakpoint
CREATE INDEX "tasks_completed_at_idx" ON "tasks" USING btree ("workspace_id","completed_at","created_at","project_id") WHERE "tasks"."completed_at" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "tasks_due_on_analytics_idx" ON "tasks" USING btree ("workspace_id","due_on","completed_at","created_at","priority","project_id") WHERE "tasks"."due_on" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "tasks_done_without_completed_at_idx" ON "tasks" USING btree ("workspace_id") WHERE "tasks"."status" = 'DONE' AND "tasks"."completed_at" IS NULL;--> statement-breakpoint
CREATE INDEX "webhook_deliveries_due_idx" ON "webhook_deliveries" USING btree ("next_attempt_at") WHERE "webhook_deliveries"."status" = 'PENDING';--> statement-breakpoint
CREATE INDEX "webhook_deliveries_subscription_idx" ON "webhook_deliveries" USING btree ("subscription_id","created_at","id");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_event_idx" ON "webhook_deliveries" USING btree ("event_id");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_completed_at_idx" ON "webhook_deliveries" USING btree ("completed_at");--> statement-breakpoint
CREATE INDEX "webhook_subscriptions_created_at_idx" ON "webhook_subscriptions" USING btree ("workspace_id","created_at","id");
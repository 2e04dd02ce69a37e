-- Every committed change to a row that servers keep in memory (credentials: API keys, personal
-- access tokens, the users and workspaces a token's caller is read with; a portfolio's revision) is
-- announced on the channel cached_rows_changed, the payload naming the table, whatever code or
-- process wrote it. PostgreSQL delivers a NOTIFY only when its transaction commits, and none after
-- a rollback. src/store/cachedRows.ts listens; drizzle-kit does not know triggers.
CREATE FUNCTION "announce_cached_rows_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_notify('cached_rows_changed', TG_TABLE_NAME);
	RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "api_keys_announce_change" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "api_keys" FOR EACH STATEMENT EXECUTE FUNCTION "announce_cached_rows_changed"();
--> statement-breakpoint
CREATE TRIGGER "personal_access_tokens_announce_change" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "personal_access_tokens" FOR EACH STATEMENT EXECUTE FUNCTION "announce_cached_rows_changed"();
--> statement-breakpoint
CREATE TRIGGER "users_announce_change" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "users" FOR EACH STATEMENT EXECUTE FUNCTION "announce_cached_rows_changed"();
--> statement-breakpoint
CREATE TRIGGER "workspaces_announce_change" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "workspaces" FOR EACH STATEMENT EXECUTE FUNCTION "announce_cached_rows_changed"();
--> statement-breakpoint
CREATE TRIGGER "portfolios_announce_change" AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "portfolios" FOR EACH STATEMENT EXECUTE FUNCTION "announce_cached_rows_changed"();

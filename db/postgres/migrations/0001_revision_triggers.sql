-- The revision triggers of SQLite's migrations 0004_collection_revisions.sql and
-- 0005_portfolio_revision_triggers.sql, in PL/pgSQL, with the same trigger names: every write raises
-- the revision readers keep encoded answers by, in the writer's own transaction, whatever code or
-- process writes. drizzle-kit does not know triggers: openPostgres() refuses a database without them.

-- A collection's first revision is random (below 2^48, as in SQLite): a workspace deleted and created
-- again under the same id must not repeat a revision a reader may still hold a page for.
CREATE FUNCTION "raise_collection_revision"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	written_workspace_id text := CASE WHEN TG_OP = 'DELETE' THEN OLD."workspace_id" ELSE NEW."workspace_id" END;
BEGIN
	INSERT INTO "collection_revisions" ("workspace_id", "collection", "revision")
	SELECT written_workspace_id, TG_ARGV[0], 1 + floor(random() * 281474976710656)::bigint
	WHERE EXISTS (SELECT 1 FROM "workspaces" WHERE "id" = written_workspace_id)
	ON CONFLICT ("workspace_id", "collection") DO UPDATE SET "revision" = "collection_revisions"."revision" + 1;
	RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "tasks_insert_revision" AFTER INSERT ON "tasks" FOR EACH ROW EXECUTE FUNCTION "raise_collection_revision"('tasks');
--> statement-breakpoint
CREATE TRIGGER "tasks_update_revision" AFTER UPDATE ON "tasks" FOR EACH ROW EXECUTE FUNCTION "raise_collection_revision"('tasks');
--> statement-breakpoint
CREATE TRIGGER "tasks_delete_revision" AFTER DELETE ON "tasks" FOR EACH ROW EXECUTE FUNCTION "raise_collection_revision"('tasks');
--> statement-breakpoint
CREATE TRIGGER "projects_insert_revision" AFTER INSERT ON "projects" FOR EACH ROW EXECUTE FUNCTION "raise_collection_revision"('projects');
--> statement-breakpoint
CREATE TRIGGER "projects_update_revision" AFTER UPDATE ON "projects" FOR EACH ROW EXECUTE FUNCTION "raise_collection_revision"('projects');
--> statement-breakpoint
CREATE TRIGGER "projects_delete_revision" AFTER DELETE ON "projects" FOR EACH ROW EXECUTE FUNCTION "raise_collection_revision"('projects');
--> statement-breakpoint
-- An update of a portfolio that leaves its revision as it was raises it. SQLite does this with a
-- second UPDATE after the row is written; PostgreSQL can change the row before it is written.
CREATE FUNCTION "raise_own_portfolio_revision"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	NEW."revision" := OLD."revision" + 1;
	RETURN NEW;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "portfolios_update_revision" BEFORE UPDATE ON "portfolios" FOR EACH ROW WHEN (NEW."revision" = OLD."revision") EXECUTE FUNCTION "raise_own_portfolio_revision"();
--> statement-breakpoint
-- A write of a portfolio's items or assets raises the portfolio's revision.
CREATE FUNCTION "raise_portfolio_revision"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	UPDATE "portfolios" SET "revision" = "revision" + 1
	WHERE "tenant_id" = CASE WHEN TG_OP = 'DELETE' THEN OLD."tenant_id" ELSE NEW."tenant_id" END;
	RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "portfolio_items_insert_revision" AFTER INSERT ON "portfolio_items" FOR EACH ROW EXECUTE FUNCTION "raise_portfolio_revision"();
--> statement-breakpoint
CREATE TRIGGER "portfolio_items_update_revision" AFTER UPDATE ON "portfolio_items" FOR EACH ROW EXECUTE FUNCTION "raise_portfolio_revision"();
--> statement-breakpoint
CREATE TRIGGER "portfolio_items_delete_revision" AFTER DELETE ON "portfolio_items" FOR EACH ROW EXECUTE FUNCTION "raise_portfolio_revision"();
--> statement-breakpoint
CREATE TRIGGER "assets_insert_revision" AFTER INSERT ON "assets" FOR EACH ROW EXECUTE FUNCTION "raise_portfolio_revision"();
--> statement-breakpoint
CREATE TRIGGER "assets_update_revision" AFTER UPDATE ON "assets" FOR EACH ROW EXECUTE FUNCTION "raise_portfolio_revision"();
--> statement-breakpoint
CREATE TRIGGER "assets_delete_revision" AFTER DELETE ON "assets" FOR EACH ROW EXECUTE FUNCTION "raise_portfolio_revision"();

-- collection_revisions gains a slot (db/postgres/schema.ts says why): a writer raises the slot of its
-- own connection, pg_backend_pid() % 64, so that concurrent writers to one workspace update different
-- rows. Under SERIALIZABLE two transactions updating one row cannot both commit: the second fails
-- and runs again, which made concurrent task writes to one workspace retry 3 to 10 times each.
-- The triggers become statement triggers over their transition table: one upsert per workspace a
-- statement wrote, not one per row (a batch insert of 500 tasks raised the same row 500 times).
ALTER TABLE "collection_revisions" ADD COLUMN "slot" bigint DEFAULT 0 NOT NULL;
--> statement-breakpoint
ALTER TABLE "collection_revisions" DROP CONSTRAINT "collection_revisions_workspace_id_collection_pk";
--> statement-breakpoint
ALTER TABLE "collection_revisions" ADD CONSTRAINT "collection_revisions_workspace_id_collection_slot_pk" PRIMARY KEY("workspace_id","collection","slot");
--> statement-breakpoint
DROP TRIGGER "tasks_insert_revision" ON "tasks";
--> statement-breakpoint
DROP TRIGGER "tasks_update_revision" ON "tasks";
--> statement-breakpoint
DROP TRIGGER "tasks_delete_revision" ON "tasks";
--> statement-breakpoint
DROP TRIGGER "projects_insert_revision" ON "projects";
--> statement-breakpoint
DROP TRIGGER "projects_update_revision" ON "projects";
--> statement-breakpoint
DROP TRIGGER "projects_delete_revision" ON "projects";
--> statement-breakpoint
DROP FUNCTION "raise_collection_revision"();
--> statement-breakpoint
-- A slot's first revision is random below 2^40: the sum of 64 slots stays an exact JavaScript number,
-- and a workspace deleted and created again under the same id does not repeat a revision.
CREATE FUNCTION "raise_collection_revisions"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO "collection_revisions" ("workspace_id", "collection", "slot", "revision")
	SELECT "written"."workspace_id", TG_ARGV[0], pg_backend_pid() % 64, 1 + floor(random() * 1099511627776)::bigint
	FROM (SELECT DISTINCT "workspace_id" FROM "written_rows") AS "written"
	WHERE EXISTS (SELECT 1 FROM "workspaces" WHERE "id" = "written"."workspace_id")
	ON CONFLICT ("workspace_id", "collection", "slot") DO UPDATE SET "revision" = "collection_revisions"."revision" + 1;
	RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER "tasks_insert_revision" AFTER INSERT ON "tasks" REFERENCING NEW TABLE AS "written_rows" FOR EACH STATEMENT EXECUTE FUNCTION "raise_collection_revisions"('tasks');
--> statement-breakpoint
CREATE TRIGGER "tasks_update_revision" AFTER UPDATE ON "tasks" REFERENCING NEW TABLE AS "written_rows" FOR EACH STATEMENT EXECUTE FUNCTION "raise_collection_revisions"('tasks');
--> statement-breakpoint
CREATE TRIGGER "tasks_delete_revision" AFTER DELETE ON "tasks" REFERENCING OLD TABLE AS "written_rows" FOR EACH STATEMENT EXECUTE FUNCTION "raise_collection_revisions"('tasks');
--> statement-breakpoint
CREATE TRIGGER "projects_insert_revision" AFTER INSERT ON "projects" REFERENCING NEW TABLE AS "written_rows" FOR EACH STATEMENT EXECUTE FUNCTION "raise_collection_revisions"('projects');
--> statement-breakpoint
CREATE TRIGGER "projects_update_revision" AFTER UPDATE ON "projects" REFERENCING NEW TABLE AS "written_rows" FOR EACH STATEMENT EXECUTE FUNCTION "raise_collection_revisions"('projects');
--> statement-breakpoint
CREATE TRIGGER "projects_delete_revision" AFTER DELETE ON "projects" REFERENCING OLD TABLE AS "written_rows" FOR EACH STATEMENT EXECUTE FUNCTION "raise_collection_revisions"('projects');

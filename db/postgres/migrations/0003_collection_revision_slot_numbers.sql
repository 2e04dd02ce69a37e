-- A connection's slot of collection_revisions comes from a sequence, taken at its first write, not
-- from pg_backend_pid() % 64: pids are spread out, and among ten connections two share a slot about
-- half the time (then their concurrent writes conflict, as on one row). Numbers handed out one
-- after another differ modulo 64 for the next 64 connections, across every instance. The number is
-- kept in the session (a setting), so it holds for the connection's life; a write rolled back
-- takes the setting with it, and the next write takes a new number.
CREATE SEQUENCE "collection_revision_slot_numbers";
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "raise_collection_revisions"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	writer_slot bigint := nullif(current_setting('contract_api.revision_slot', true), '')::bigint;
BEGIN
	IF writer_slot IS NULL THEN
		writer_slot := nextval('collection_revision_slot_numbers') % 64;
		PERFORM set_config('contract_api.revision_slot', writer_slot::text, false);
	END IF;
	INSERT INTO "collection_revisions" ("workspace_id", "collection", "slot", "revision")
	SELECT "written"."workspace_id", TG_ARGV[0], writer_slot, 1 + floor(random() * 1099511627776)::bigint
	FROM (SELECT DISTINCT "workspace_id" FROM "written_rows") AS "written"
	WHERE EXISTS (SELECT 1 FROM "workspaces" WHERE "id" = "written"."workspace_id")
	ON CONFLICT ("workspace_id", "collection", "slot") DO UPDATE SET "revision" = "collection_revisions"."revision" + 1;
	RETURN NULL;
END
$$;

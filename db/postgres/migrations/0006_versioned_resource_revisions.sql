-- The revision triggers of tasks and projects (0002, 0003) for the other versioned resources, so that
-- a kept list page of companies, contacts, deals, contracts or connectors is rebuilt after any write
-- to its table, from any connection or process (src/store/listPageCache.ts).
CREATE TRIGGER "companies_insert_revision" AFTER INSERT ON "companies" REFERENCING NEW TABLE AS "written_rows" FOR EACH STATEMENT EXECUTE FUNCTION "raise_collection_revisions"('companies');
--> statement-breakpoint
CREATE TRIGGER "companies_update_revision" AFTER UPDATE ON "companies" REFERENCING NEW TABLE AS "written_rows" FOR EACH STATEMENT EXECUTE FUNCTION "raise_collection_revisions"('companies');
--> statement-breakpoint
CREATE TRIGGER "companies_delete_revision" AFTER DELETE ON "companies" REFERENCING OLD TABLE AS "written_rows" FOR EACH STATEMENT EXECUTE FUNCTION "raise_collection_revisions"('companies');
--> statement-breakpoint
CREATE TRIGGER "contacts_insert_revision" AFTER INSERT ON "contacts" REFERENCING NEW TABLE AS "written_rows" FOR EACH STATEMENT EXECUTE FUNCTION "raise_collection_revisions"('contacts');
--> statement-breakpoint
CREATE TRIGGER "contacts_update_revision" AFTER UPDATE ON "contacts" REFERENCING NEW TABLE AS "written_rows" FOR EACH STATEMENT EXECUTE FUNCTION "raise_collection_revisions"('contacts');
--> statement-breakpoint
CREATE TRIGGER "contacts_delete_revision" AFTER DELETE ON "contacts" REFERENCING OLD TABLE AS "written_rows" FOR EACH STATEMENT EXECUTE FUNCTION "raise_collection_revisions"('contacts');
--> statement-breakpoint
CREATE TRIGGER "deals_insert_revision" AFTER INSERT ON "deals" REFERENCING NEW TABLE AS "written_rows" FOR EACH STATEMENT EXECUTE FUNCTION "raise_collection_revisions"('deals');
--> statement-breakpoint
CREATE TRIGGER "deals_update_revision" AFTER UPDATE ON "deals" REFERENCING NEW TABLE AS "written_rows" FOR EACH STATEMENT EXECUTE FUNCTION "raise_collection_revisions"('deals');
--> statement-breakpoint
CREATE TRIGGER "deals_delete_revision" AFTER DELETE ON "deals" REFERENCING OLD TABLE AS "written_rows" FOR EACH STATEMENT EXECUTE FUNCTION "raise_collection_revisions"('deals');
--> statement-breakpoint
CREATE TRIGGER "contracts_insert_revision" AFTER INSERT ON "contracts" REFERENCING NEW TABLE AS "written_rows" FOR EACH STATEMENT EXECUTE FUNCTION "raise_collection_revisions"('contracts');
--> statement-breakpoint
CREATE TRIGGER "contracts_update_revision" AFTER UPDATE ON "contracts" REFERENCING NEW TABLE AS "written_rows" FOR EACH STATEMENT EXECUTE FUNCTION "raise_collection_revisions"('contracts');
--> statement-breakpoint
CREATE TRIGGER "contracts_delete_revision" AFTER DELETE ON "contracts" REFERENCING OLD TABLE AS "written_rows" FOR EACH STATEMENT EXECUTE FUNCTION "raise_collection_revisions"('contracts');
--> statement-breakpoint
CREATE TRIGGER "connectors_insert_revision" AFTER INSERT ON "connectors" REFERENCING NEW TABLE AS "written_rows" FOR EACH STATEMENT EXECUTE FUNCTION "raise_collection_revisions"('connectors');
--> statement-breakpoint
CREATE TRIGGER "connectors_update_revision" AFTER UPDATE ON "connectors" REFERENCING NEW TABLE AS "written_rows" FOR EACH STATEMENT EXECUTE FUNCTION "raise_collection_revisions"('connectors');
--> statement-breakpoint
CREATE TRIGGER "connectors_delete_revision" AFTER DELETE ON "connectors" REFERENCING OLD TABLE AS "written_rows" FOR EACH STATEMENT EXECUTE FUNCTION "raise_collection_revisions"('connectors');

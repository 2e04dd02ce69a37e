-- collection_revisions gains a slot (db/schema.ts says why). SQLite has one writer and keeps raising
-- slot 0; its triggers are made again with the new conflict target. They are dropped first: SQLite
-- refuses to rename a table while a trigger names a table that does not exist.
DROP TRIGGER `tasks_insert_revision`;
--> statement-breakpoint
DROP TRIGGER `tasks_update_revision`;
--> statement-breakpoint
DROP TRIGGER `tasks_delete_revision`;
--> statement-breakpoint
DROP TRIGGER `projects_insert_revision`;
--> statement-breakpoint
DROP TRIGGER `projects_update_revision`;
--> statement-breakpoint
DROP TRIGGER `projects_delete_revision`;
--> statement-breakpoint
CREATE TABLE `__new_collection_revisions` (
	`workspace_id` text NOT NULL,
	`collection` text NOT NULL,
	`slot` integer DEFAULT 0 NOT NULL,
	`revision` integer NOT NULL,
	PRIMARY KEY(`workspace_id`, `collection`, `slot`),
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
INSERT INTO `__new_collection_revisions` (`workspace_id`, `collection`, `slot`, `revision`) SELECT `workspace_id`, `collection`, 0, `revision` FROM `collection_revisions`;
--> statement-breakpoint
DROP TABLE `collection_revisions`;
--> statement-breakpoint
ALTER TABLE `__new_collection_revisions` RENAME TO `collection_revisions`;
--> statement-breakpoint
CREATE TRIGGER `tasks_insert_revision` AFTER INSERT ON `tasks`
BEGIN
	INSERT INTO `collection_revisions` (`workspace_id`, `collection`, `slot`, `revision`)
	SELECT NEW.`workspace_id`, 'tasks', 0, 1 + abs(random() % 281474976710656) WHERE EXISTS (SELECT 1 FROM `workspaces` WHERE `id` = NEW.`workspace_id`)
	ON CONFLICT (`workspace_id`, `collection`, `slot`) DO UPDATE SET `revision` = `revision` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `tasks_update_revision` AFTER UPDATE ON `tasks`
BEGIN
	INSERT INTO `collection_revisions` (`workspace_id`, `collection`, `slot`, `revision`)
	SELECT NEW.`workspace_id`, 'tasks', 0, 1 + abs(random() % 281474976710656) WHERE EXISTS (SELECT 1 FROM `workspaces` WHERE `id` = NEW.`workspace_id`)
	ON CONFLICT (`workspace_id`, `collection`, `slot`) DO UPDATE SET `revision` = `revision` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `tasks_delete_revision` AFTER DELETE ON `tasks`
BEGIN
	INSERT INTO `collection_revisions` (`workspace_id`, `collection`, `slot`, `revision`)
	SELECT OLD.`workspace_id`, 'tasks', 0, 1 + abs(random() % 281474976710656) WHERE EXISTS (SELECT 1 FROM `workspaces` WHERE `id` = OLD.`workspace_id`)
	ON CONFLICT (`workspace_id`, `collection`, `slot`) DO UPDATE SET `revision` = `revision` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `projects_insert_revision` AFTER INSERT ON `projects`
BEGIN
	INSERT INTO `collection_revisions` (`workspace_id`, `collection`, `slot`, `revision`)
	SELECT NEW.`workspace_id`, 'projects', 0, 1 + abs(random() % 281474976710656) WHERE EXISTS (SELECT 1 FROM `workspaces` WHERE `id` = NEW.`workspace_id`)
	ON CONFLICT (`workspace_id`, `collection`, `slot`) DO UPDATE SET `revision` = `revision` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `projects_update_revision` AFTER UPDATE ON `projects`
BEGIN
	INSERT INTO `collection_revisions` (`workspace_id`, `collection`, `slot`, `revision`)
	SELECT NEW.`workspace_id`, 'projects', 0, 1 + abs(random() % 281474976710656) WHERE EXISTS (SELECT 1 FROM `workspaces` WHERE `id` = NEW.`workspace_id`)
	ON CONFLICT (`workspace_id`, `collection`, `slot`) DO UPDATE SET `revision` = `revision` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `projects_delete_revision` AFTER DELETE ON `projects`
BEGIN
	INSERT INTO `collection_revisions` (`workspace_id`, `collection`, `slot`, `revision`)
	SELECT OLD.`workspace_id`, 'projects', 0, 1 + abs(random() % 281474976710656) WHERE EXISTS (SELECT 1 FROM `workspaces` WHERE `id` = OLD.`workspace_id`)
	ON CONFLICT (`workspace_id`, `collection`, `slot`) DO UPDATE SET `revision` = `revision` + 1;
END;

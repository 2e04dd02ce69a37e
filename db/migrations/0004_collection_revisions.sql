-- A collection's first revision is random, like portfolios.revision: a workspace deleted and created
-- again under the same id must not repeat a revision a reader may still hold a page for.
CREATE TABLE `collection_revisions` (
	`workspace_id` text NOT NULL,
	`collection` text NOT NULL,
	`revision` integer NOT NULL,
	PRIMARY KEY(`workspace_id`, `collection`),
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TRIGGER `tasks_insert_revision` AFTER INSERT ON `tasks`
BEGIN
	INSERT INTO `collection_revisions` (`workspace_id`, `collection`, `revision`)
	SELECT NEW.`workspace_id`, 'tasks', 1 + abs(random() % 281474976710656) WHERE EXISTS (SELECT 1 FROM `workspaces` WHERE `id` = NEW.`workspace_id`)
	ON CONFLICT (`workspace_id`, `collection`) DO UPDATE SET `revision` = `revision` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `tasks_update_revision` AFTER UPDATE ON `tasks`
BEGIN
	INSERT INTO `collection_revisions` (`workspace_id`, `collection`, `revision`)
	SELECT NEW.`workspace_id`, 'tasks', 1 + abs(random() % 281474976710656) WHERE EXISTS (SELECT 1 FROM `workspaces` WHERE `id` = NEW.`workspace_id`)
	ON CONFLICT (`workspace_id`, `collection`) DO UPDATE SET `revision` = `revision` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `tasks_delete_revision` AFTER DELETE ON `tasks`
BEGIN
	INSERT INTO `collection_revisions` (`workspace_id`, `collection`, `revision`)
	SELECT OLD.`workspace_id`, 'tasks', 1 + abs(random() % 281474976710656) WHERE EXISTS (SELECT 1 FROM `workspaces` WHERE `id` = OLD.`workspace_id`)
	ON CONFLICT (`workspace_id`, `collection`) DO UPDATE SET `revision` = `revision` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `projects_insert_revision` AFTER INSERT ON `projects`
BEGIN
	INSERT INTO `collection_revisions` (`workspace_id`, `collection`, `revision`)
	SELECT NEW.`workspace_id`, 'projects', 1 + abs(random() % 281474976710656) WHERE EXISTS (SELECT 1 FROM `workspaces` WHERE `id` = NEW.`workspace_id`)
	ON CONFLICT (`workspace_id`, `collection`) DO UPDATE SET `revision` = `revision` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `projects_update_revision` AFTER UPDATE ON `projects`
BEGIN
	INSERT INTO `collection_revisions` (`workspace_id`, `collection`, `revision`)
	SELECT NEW.`workspace_id`, 'projects', 1 + abs(random() % 281474976710656) WHERE EXISTS (SELECT 1 FROM `workspaces` WHERE `id` = NEW.`workspace_id`)
	ON CONFLICT (`workspace_id`, `collection`) DO UPDATE SET `revision` = `revision` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `projects_delete_revision` AFTER DELETE ON `projects`
BEGIN
	INSERT INTO `collection_revisions` (`workspace_id`, `collection`, `revision`)
	SELECT OLD.`workspace_id`, 'projects', 1 + abs(random() % 281474976710656) WHERE EXISTS (SELECT 1 FROM `workspaces` WHERE `id` = OLD.`workspace_id`)
	ON CONFLICT (`workspace_id`, `collection`) DO UPDATE SET `revision` = `revision` + 1;
END;

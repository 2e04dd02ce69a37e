-- The revision triggers of tasks and projects (0013) for the other versioned resources, so that a
-- kept list page of companies, contacts, deals, contracts or connectors is rebuilt after any write
-- to its table, from any connection or process (src/store/listPageCache.ts).
CREATE TRIGGER `companies_insert_revision` AFTER INSERT ON `companies`
BEGIN
	INSERT INTO `collection_revisions` (`workspace_id`, `collection`, `slot`, `revision`)
	SELECT NEW.`workspace_id`, 'companies', 0, 1 + abs(random() % 281474976710656) WHERE EXISTS (SELECT 1 FROM `workspaces` WHERE `id` = NEW.`workspace_id`)
	ON CONFLICT (`workspace_id`, `collection`, `slot`) DO UPDATE SET `revision` = `revision` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `companies_update_revision` AFTER UPDATE ON `companies`
BEGIN
	INSERT INTO `collection_revisions` (`workspace_id`, `collection`, `slot`, `revision`)
	SELECT NEW.`workspace_id`, 'companies', 0, 1 + abs(random() % 281474976710656) WHERE EXISTS (SELECT 1 FROM `workspaces` WHERE `id` = NEW.`workspace_id`)
	ON CONFLICT (`workspace_id`, `collection`, `slot`) DO UPDATE SET `revision` = `revision` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `companies_delete_revision` AFTER DELETE ON `companies`
BEGIN
	INSERT INTO `collection_revisions` (`workspace_id`, `collection`, `slot`, `revision`)
	SELECT OLD.`workspace_id`, 'companies', 0, 1 + abs(random() % 281474976710656) WHERE EXISTS (SELECT 1 FROM `workspaces` WHERE `id` = OLD.`workspace_id`)
	ON CONFLICT (`workspace_id`, `collection`, `slot`) DO UPDATE SET `revision` = `revision` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `contacts_insert_revision` AFTER INSERT ON `contacts`
BEGIN
	INSERT INTO `collection_revisions` (`workspace_id`, `collection`, `slot`, `revision`)
	SELECT NEW.`workspace_id`, 'contacts', 0, 1 + abs(random() % 281474976710656) WHERE EXISTS (SELECT 1 FROM `workspaces` WHERE `id` = NEW.`workspace_id`)
	ON CONFLICT (`workspace_id`, `collection`, `slot`) DO UPDATE SET `revision` = `revision` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `contacts_update_revision` AFTER UPDATE ON `contacts`
BEGIN
	INSERT INTO `collection_revisions` (`workspace_id`, `collection`, `slot`, `revision`)
	SELECT NEW.`workspace_id`, 'contacts', 0, 1 + abs(random() % 281474976710656) WHERE EXISTS (SELECT 1 FROM `workspaces` WHERE `id` = NEW.`workspace_id`)
	ON CONFLICT (`workspace_id`, `collection`, `slot`) DO UPDATE SET `revision` = `revision` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `contacts_delete_revision` AFTER DELETE ON `contacts`
BEGIN
	INSERT INTO `collection_revisions` (`workspace_id`, `collection`, `slot`, `revision`)
	SELECT OLD.`workspace_id`, 'contacts', 0, 1 + abs(random() % 281474976710656) WHERE EXISTS (SELECT 1 FROM `workspaces` WHERE `id` = OLD.`workspace_id`)
	ON CONFLICT (`workspace_id`, `collection`, `slot`) DO UPDATE SET `revision` = `revision` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `deals_insert_revision` AFTER INSERT ON `deals`
BEGIN
	INSERT INTO `collection_revisions` (`workspace_id`, `collection`, `slot`, `revision`)
	SELECT NEW.`workspace_id`, 'deals', 0, 1 + abs(random() % 281474976710656) WHERE EXISTS (SELECT 1 FROM `workspaces` WHERE `id` = NEW.`workspace_id`)
	ON CONFLICT (`workspace_id`, `collection`, `slot`) DO UPDATE SET `revision` = `revision` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `deals_update_revision` AFTER UPDATE ON `deals`
BEGIN
	INSERT INTO `collection_revisions` (`workspace_id`, `collection`, `slot`, `revision`)
	SELECT NEW.`workspace_id`, 'deals', 0, 1 + abs(random() % 281474976710656) WHERE EXISTS (SELECT 1 FROM `workspaces` WHERE `id` = NEW.`workspace_id`)
	ON CONFLICT (`workspace_id`, `collection`, `slot`) DO UPDATE SET `revision` = `revision` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `deals_delete_revision` AFTER DELETE ON `deals`
BEGIN
	INSERT INTO `collection_revisions` (`workspace_id`, `collection`, `slot`, `revision`)
	SELECT OLD.`workspace_id`, 'deals', 0, 1 + abs(random() % 281474976710656) WHERE EXISTS (SELECT 1 FROM `workspaces` WHERE `id` = OLD.`workspace_id`)
	ON CONFLICT (`workspace_id`, `collection`, `slot`) DO UPDATE SET `revision` = `revision` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `contracts_insert_revision` AFTER INSERT ON `contracts`
BEGIN
	INSERT INTO `collection_revisions` (`workspace_id`, `collection`, `slot`, `revision`)
	SELECT NEW.`workspace_id`, 'contracts', 0, 1 + abs(random() % 281474976710656) WHERE EXISTS (SELECT 1 FROM `workspaces` WHERE `id` = NEW.`workspace_id`)
	ON CONFLICT (`workspace_id`, `collection`, `slot`) DO UPDATE SET `revision` = `revision` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `contracts_update_revision` AFTER UPDATE ON `contracts`
BEGIN
	INSERT INTO `collection_revisions` (`workspace_id`, `collection`, `slot`, `revision`)
	SELECT NEW.`workspace_id`, 'contracts', 0, 1 + abs(random() % 281474976710656) WHERE EXISTS (SELECT 1 FROM `workspaces` WHERE `id` = NEW.`workspace_id`)
	ON CONFLICT (`workspace_id`, `collection`, `slot`) DO UPDATE SET `revision` = `revision` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `contracts_delete_revision` AFTER DELETE ON `contracts`
BEGIN
	INSERT INTO `collection_revisions` (`workspace_id`, `collection`, `slot`, `revision`)
	SELECT OLD.`workspace_id`, 'contracts', 0, 1 + abs(random() % 281474976710656) WHERE EXISTS (SELECT 1 FROM `workspaces` WHERE `id` = OLD.`workspace_id`)
	ON CONFLICT (`workspace_id`, `collection`, `slot`) DO UPDATE SET `revision` = `revision` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `connectors_insert_revision` AFTER INSERT ON `connectors`
BEGIN
	INSERT INTO `collection_revisions` (`workspace_id`, `collection`, `slot`, `revision`)
	SELECT NEW.`workspace_id`, 'connectors', 0, 1 + abs(random() % 281474976710656) WHERE EXISTS (SELECT 1 FROM `workspaces` WHERE `id` = NEW.`workspace_id`)
	ON CONFLICT (`workspace_id`, `collection`, `slot`) DO UPDATE SET `revision` = `revision` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `connectors_update_revision` AFTER UPDATE ON `connectors`
BEGIN
	INSERT INTO `collection_revisions` (`workspace_id`, `collection`, `slot`, `revision`)
	SELECT NEW.`workspace_id`, 'connectors', 0, 1 + abs(random() % 281474976710656) WHERE EXISTS (SELECT 1 FROM `workspaces` WHERE `id` = NEW.`workspace_id`)
	ON CONFLICT (`workspace_id`, `collection`, `slot`) DO UPDATE SET `revision` = `revision` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `connectors_delete_revision` AFTER DELETE ON `connectors`
BEGIN
	INSERT INTO `collection_revisions` (`workspace_id`, `collection`, `slot`, `revision`)
	SELECT OLD.`workspace_id`, 'connectors', 0, 1 + abs(random() % 281474976710656) WHERE EXISTS (SELECT 1 FROM `workspaces` WHERE `id` = OLD.`workspace_id`)
	ON CONFLICT (`workspace_id`, `collection`, `slot`) DO UPDATE SET `revision` = `revision` + 1;
END;

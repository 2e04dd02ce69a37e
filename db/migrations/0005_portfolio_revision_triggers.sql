-- Every write to a published portfolio raises portfolios.revision in its own transaction, whatever
-- code or process writes (an older importer, hand-run SQL): readers keep encoded answers per revision.
CREATE TRIGGER `portfolios_update_revision` AFTER UPDATE ON `portfolios` WHEN NEW.`revision` = OLD.`revision`
BEGIN
	UPDATE `portfolios` SET `revision` = `revision` + 1 WHERE `tenant_id` = NEW.`tenant_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `portfolio_items_insert_revision` AFTER INSERT ON `portfolio_items`
BEGIN
	UPDATE `portfolios` SET `revision` = `revision` + 1 WHERE `tenant_id` = NEW.`tenant_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `portfolio_items_update_revision` AFTER UPDATE ON `portfolio_items`
BEGIN
	UPDATE `portfolios` SET `revision` = `revision` + 1 WHERE `tenant_id` = NEW.`tenant_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `portfolio_items_delete_revision` AFTER DELETE ON `portfolio_items`
BEGIN
	UPDATE `portfolios` SET `revision` = `revision` + 1 WHERE `tenant_id` = OLD.`tenant_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `assets_insert_revision` AFTER INSERT ON `assets`
BEGIN
	UPDATE `portfolios` SET `revision` = `revision` + 1 WHERE `tenant_id` = NEW.`tenant_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `assets_update_revision` AFTER UPDATE ON `assets`
BEGIN
	UPDATE `portfolios` SET `revision` = `revision` + 1 WHERE `tenant_id` = NEW.`tenant_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `assets_delete_revision` AFTER DELETE ON `assets`
BEGIN
	UPDATE `portfolios` SET `revision` = `revision` + 1 WHERE `tenant_id` = OLD.`tenant_id`;
END;

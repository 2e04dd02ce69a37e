// Which of drizzle-kit's migrations a database lacks. drizzle's migrators (SQLite and PostgreSQL
// alike) apply every migration of the journal whose `when` is later than the newest `created_at` in
// the database's __drizzle_migrations table; this answers the same question, by name, so that
// `admin migrate` can say what it applied.
import { readFileSync } from 'node:fs';
import path from 'node:path';

interface JournalEntry {
  tag: string;
  when: number;
}

/** The tags (`0003_portfolio_revision`) of the folder's migrations newer than `lastAppliedMillis` (null: none applied yet), oldest first. */
export function migrationsAfter(migrationsFolder: string, lastAppliedMillis: number | null): string[] {
  const journal = JSON.parse(readFileSync(path.join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as { entries: JournalEntry[] };
  return journal.entries.filter((entry) => lastAppliedMillis === null || entry.when > lastAppliedMillis).map((entry) => entry.tag);
}

/** The `when` of the folder's newest migration: a database whose newest `created_at` is older lacks one. */
export function newestMigrationMillis(migrationsFolder: string): number {
  const journal = JSON.parse(readFileSync(path.join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as { entries: JournalEntry[] };
  return Math.max(...journal.entries.map((entry) => entry.when));
}

import { sql } from 'drizzle-orm';
import { bigint, boolean, index as pgIndex, pgTable, text as pgText, unique } from 'drizzle-orm/pg-core';
import { check, index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { describe, expect, it } from 'vitest';
import { schemaDifferences } from '../../../scripts/schemaParity.js';

describe('the SQLite and PostgreSQL schemas', () => {
  it('describe the same tables, columns, keys, indexes and checks', () => {
    expect(schemaDifferences()).toEqual([]);
  });

  it('are told apart column by column, index by index, with what to add where', () => {
    const sqlite = {
      notes: sqliteTable(
        'notes',
        {
          id: text('id').primaryKey(),
          workspaceId: text('workspace_id').notNull(),
          createdAt: integer('created_at').notNull(),
          archivedAt: integer('archived_at'),
          pinned: integer('pinned', { mode: 'boolean' }).notNull(),
        },
        (table) => [
          uniqueIndex('notes_workspace_id_id_unique').on(table.workspaceId, table.id),
          index('notes_created_at_idx').on(table.workspaceId, table.createdAt),
          check('notes_created_at_positive', sql`${table.createdAt} > 0`),
        ],
      ),
      labels: sqliteTable('labels', { id: text('id').primaryKey() }),
    };
    const postgres = {
      notes: pgTable(
        'notes',
        {
          id: pgText('id').primaryKey(),
          workspaceId: pgText('workspace_id'),
          createdAt: bigint('created_at', { mode: 'number' }).notNull(),
          pinned: boolean('pinned').notNull(),
          body: pgText('body'),
        },
        (table) => [unique('notes_workspace_id_id_unique').on(table.workspaceId, table.id), pgIndex('notes_created_at_idx').on(table.createdAt)],
      ),
    };
    expect(schemaDifferences(sqlite, postgres)).toEqual([
      'Table labels is in db/schema.ts but not in db/postgres/schema.ts: add it to the tables that file exports and run npm run db:generate.',
      'Column notes.workspace_id is NOT NULL in db/schema.ts but nullable in db/postgres/schema.ts.',
      "Column notes.archived_at is in db/schema.ts but not in db/postgres/schema.ts: add archivedAt: bigint('archived_at', { mode: 'number' }) to its notes table.",
      'Column notes.body is in db/postgres/schema.ts but not in db/schema.ts: add body to its notes table there.',
      'Index notes_created_at_idx on notes is (workspace_id, created_at) in db/schema.ts but (created_at) in db/postgres/schema.ts.',
      'CHECK constraint notes_created_at_positive of notes is in db/schema.ts but not in db/postgres/schema.ts: add it there.',
    ]);
  });

  it('require an integer to be a bigint in PostgreSQL, so both engines hold the same 64-bit values', () => {
    const sqlite = { marks: sqliteTable('marks', { id: text('id').primaryKey(), at: integer('at').notNull() }) };
    const postgres = { marks: pgTable('marks', { id: pgText('id').primaryKey(), at: pgText('at').notNull() }) };
    expect(schemaDifferences(sqlite, postgres)).toEqual([
      "Column marks.at is SQLiteInteger in db/schema.ts, so db/postgres/schema.ts must declare it bigint('at', { mode: 'number' }), not PgText.",
    ]);
  });
});

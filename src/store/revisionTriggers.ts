/** The versioned resources' tables: every write to one raises its collection's revision (`collection_revisions`). */
export const listedCollections = ['tasks', 'projects', 'companies', 'contacts', 'deals', 'contracts', 'connectors'] as const;

/**
 * The triggers that raise the revisions readers keep encoded answers by (SQLite: migrations 0004, 0005, 0013 and 0015; PostgreSQL: 0001, 0002 and 0005).
 * drizzle-kit does not know them: a generated migration that rebuilds one of these tables would
 * drop them silently and leave kept answers stale, so start-up refuses a database without them.
 */
export const revisionTriggers = [
  ...[...listedCollections, 'portfolio_items', 'assets'].flatMap((table) => ['insert', 'update', 'delete'].map((event) => `${table}_${event}_revision`)),
  'portfolios_update_revision',
];

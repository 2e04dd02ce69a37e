import type BetterSqlite3 from 'better-sqlite3';
import { drizzle, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import * as schema from '../../db/schema.js';

export type AppDatabase = BetterSQLite3Database<typeof schema>;

const instances = new WeakMap<BetterSqlite3.Database, AppDatabase>();

/** The drizzle wrapper of a connection, made once per connection. */
export function drizzleFor(db: BetterSqlite3.Database): AppDatabase {
  let instance = instances.get(db);
  if (!instance) {
    instance = drizzle(db, { schema });
    instances.set(db, instance);
  }
  return instance;
}

import type BetterSqlite3 from 'better-sqlite3';
import { asc, eq, sql } from 'drizzle-orm';
import { tenants } from '../../db/schema.js';
import { drizzleFor } from './drizzle.js';
import { StoreError } from './errors.js';
import { defaultRandomBytes, newId, type RandomBytes } from './ids.js';

export interface Tenant {
  id: string;
  name: string;
  /** Milliseconds since the epoch. */
  createdAt: number;
}

export interface TenantStoreOptions {
  now?: () => number;
  randomBytes?: RandomBytes;
}

export interface TenantStore {
  createTenant(name: string, options?: { id?: string }): { id: string };
  getTenant(id: string): Tenant | undefined;
  listTenants(): Tenant[];
}

export function createTenantStore(db: BetterSqlite3.Database, options: TenantStoreOptions = {}): TenantStore {
  const now = options.now ?? Date.now;
  const randomBytes = options.randomBytes ?? defaultRandomBytes;
  const orm = drizzleFor(db);
  const selectById = orm
    .select()
    .from(tenants)
    .where(eq(tenants.id, sql.placeholder('id')))
    .prepare();
  const insertTenant = orm
    .insert(tenants)
    .values({ id: sql.placeholder('id'), name: sql.placeholder('name'), createdAt: sql.placeholder('createdAt') })
    .prepare();
  const selectAll = orm.select().from(tenants).orderBy(asc(tenants.createdAt), asc(tenants.id)).prepare();

  return {
    createTenant(name, createOptions = {}) {
      const trimmed = name.trim();
      if (trimmed === '') throw new StoreError('invalid_argument', 'A tenant needs a non-empty name.');
      const id = createOptions.id ?? newId('ten', randomBytes);
      if (!/^ten_[A-Za-z0-9]+$/.test(id)) throw new StoreError('invalid_argument', `Invalid tenant id "${id}".`);
      insertTenant.run({ id, name: trimmed, createdAt: now() });
      return { id };
    },
    getTenant(id) {
      return selectById.get({ id });
    },
    listTenants() {
      return selectAll.all();
    },
  };
}

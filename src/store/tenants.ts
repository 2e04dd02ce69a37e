import { asc, eq, sql } from 'drizzle-orm';
import { tenants } from '../../db/schema.js';
import { engineOf, type StoreSource } from './engine.js';
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
  createTenant(name: string, options?: { id?: string }): Promise<{ id: string }>;
  getTenant(id: string): Promise<Tenant | undefined>;
  listTenants(): Promise<Tenant[]>;
}

export function createTenantStore(source: StoreSource, options: TenantStoreOptions = {}): TenantStore {
  const now = options.now ?? Date.now;
  const randomBytes = options.randomBytes ?? defaultRandomBytes;
  const engine = engineOf(source);
  const { orm } = engine;
  const selectById = engine.statement<Tenant, { id: string }>(orm.select().from(tenants).where(eq(tenants.id, sql.placeholder('id'))));
  const insertTenant = engine.statement<unknown, Tenant>(
    orm.insert(tenants).values({ id: sql.placeholder('id'), name: sql.placeholder('name'), createdAt: sql.placeholder('createdAt') }),
  );
  const selectAll = engine.statement<Tenant, Record<string, never>>(orm.select().from(tenants).orderBy(asc(tenants.createdAt), asc(tenants.id)));

  return {
    async createTenant(name, createOptions = {}) {
      const trimmed = name.trim();
      if (trimmed === '') throw new StoreError('invalid_argument', 'A tenant needs a non-empty name.');
      const id = createOptions.id ?? newId('ten', randomBytes);
      if (!/^ten_[A-Za-z0-9]+$/.test(id)) throw new StoreError('invalid_argument', `Invalid tenant id "${id}".`);
      const createdAt = now();
      await engine.write(() => insertTenant.run({ id, name: trimmed, createdAt }));
      return { id };
    },
    getTenant(id) {
      return engine.read(() => selectById.object({ id }));
    },
    listTenants() {
      return engine.read(() => selectAll.objects({}));
    },
  };
}

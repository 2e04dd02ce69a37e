import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StoreError } from '../../src/store/errors.js';
import { createTenantStore } from '../../src/store/tenants.js';
import { makeClock, makeDatabase, type TempDatabase } from './factories.js';

let t: TempDatabase;
beforeEach(() => {
  t = makeDatabase();
});
afterEach(() => t.cleanup());

describe('tenant store', () => {
  it('creates tenants with prefixed random ids and the injected clock', async () => {
    const clock = makeClock(1_700_000_000_000);
    const store = createTenantStore(t.db, { now: clock.now });
    const { id } = await store.createTenant('  Acme Studio ');
    expect(id).toMatch(/^ten_[A-Za-z0-9]{20}$/);
    expect(await store.getTenant(id)).toEqual({ id, name: 'Acme Studio', createdAt: 1_700_000_000_000 });
    expect((await store.createTenant('Other')).id).not.toBe(id);
  });

  it('uses injected randomness for ids', async () => {
    const store = createTenantStore(t.db, { randomBytes: (size) => new Uint8Array(size).fill(0) });
    expect((await store.createTenant('Zero')).id).toBe(`ten_${'A'.repeat(20)}`);
  });

  it('accepts a chosen id (the demo tenants use fixed ones) and refuses a malformed one', async () => {
    const store = createTenantStore(t.db);
    expect(await store.createTenant('Fixed', { id: 'ten_fixed1' })).toEqual({ id: 'ten_fixed1' });
    await expect(store.createTenant('Bad', { id: 'tenant-1' })).rejects.toThrow(StoreError);
  });

  it('refuses an empty name', async () => {
    await expect(createTenantStore(t.db).createTenant('   ')).rejects.toThrow(/non-empty name/);
  });

  it('lists tenants oldest first and answers undefined for an unknown id', async () => {
    const clock = makeClock(1000);
    const store = createTenantStore(t.db, { now: clock.now });
    const b = (await store.createTenant('B')).id;
    clock.advance(1);
    const a = (await store.createTenant('A')).id;
    expect((await store.listTenants()).map((tenant) => tenant.id)).toEqual([b, a]);
    expect(await store.getTenant('ten_missing')).toBeUndefined();
  });
});

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCompanyStore } from '../../src/store/companies.js';
import { createContractStore, expiryInstantOf } from '../../src/store/contracts.js';
import { makeClock, makeDatabase, type TempDatabase } from './factories.js';
import { makeWorkspace } from './workPlatformFactories.js';

let t: TempDatabase;
const clock = makeClock(Date.UTC(2026, 10, 25, 9, 0, 0));
beforeEach(() => {
  t = makeDatabase();
});
afterEach(() => t.cleanup());

const countEvents = (type: string) => (t.db.prepare('SELECT count(*) AS n FROM events WHERE type = ?').get(type) as { n: number }).n;

describe('contract store', () => {
  it('expires at 00:00 UTC of the day after expiresOn, and refuses a day that does not exist', () => {
    expect(expiryInstantOf('2026-12-31')).toBe(Date.UTC(2027, 0, 1));
    expect(expiryInstantOf('2028-02-29')).toBe(Date.UTC(2028, 2, 1));
    expect(() => expiryInstantOf('2027-02-29')).toThrow(/calendar day/);
    // Years 0000–0099 are the years written, not 1900–1999.
    expect(new Date(expiryInstantOf('0050-06-30')).toISOString()).toBe('0050-07-01T00:00:00.000Z');
    expect(() => expiryInstantOf('0051-02-29')).toThrow(/calendar day/);
  });

  it('the sweep records every overdue sent contract of every workspace once, in batches, and leaves the rest', async () => {
    const store = createContractStore(t.db, { now: clock.now });
    const workspaces = [makeWorkspace(t.db), makeWorkspace(t.db)];
    const overdue: string[] = [];
    for (const [index, workspace] of workspaces.entries()) {
      const companyId = (await createCompanyStore(t.db, { now: clock.now }).createCompany(workspace.workspaceId, { name: 'Acme' }, workspace.actor)).id;
      for (let n = 0; n < 300; n += 1) {
        const contract = await store.createContract(workspace.workspaceId, { title: `C${n}`, companyId, expiresOn: '2026-11-25' }, workspace.actor);
        await store.moveContract(workspace.workspaceId, contract.id, 'send', null, workspace.actor);
        overdue.push(contract.id);
      }
      const lasting = await store.createContract(workspace.workspaceId, { title: 'Lasting', companyId, expiresOn: '2026-11-26' }, workspace.actor);
      await store.moveContract(workspace.workspaceId, lasting.id, 'send', null, workspace.actor);
      await store.createContract(workspace.workspaceId, { title: `Draft ${index}`, companyId, expiresOn: '2026-11-20' }, workspace.actor);
    }
    clock.set(Date.UTC(2026, 10, 26, 0, 0, 30));
    expect(await store.expireOverdueContracts()).toBe(600);
    expect(countEvents('contract.expired')).toBe(600);
    expect(await store.expireOverdueContracts()).toBe(0);
    expect(countEvents('contract.expired')).toBe(600);
    const statuses = t.db.prepare('SELECT status, count(*) AS n FROM contracts GROUP BY status ORDER BY status').all();
    expect(statuses).toEqual([{ status: 'draft', n: 2 }, { status: 'expired', n: 600 }, { status: 'sent', n: 2 }]);
    const row = t.db.prepare('SELECT expired_at AS expiredAt, updated_at AS updatedAt, version FROM contracts WHERE id = ?').get(overdue[0]);
    expect(row).toEqual({ expiredAt: Date.UTC(2026, 10, 26), updatedAt: Date.UTC(2026, 10, 26), version: 3 });
  });
});

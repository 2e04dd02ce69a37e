import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCompanyStore } from '../../src/store/companies.js';
import { createContactStore } from '../../src/store/contacts.js';
import { createDealStore } from '../../src/store/deals.js';
import { createUserStore } from '../../src/store/users.js';
import { makeClock, makeDatabase, type TempDatabase } from './factories.js';
import { makeUser, makeWorkspace, type WorkspaceFixture } from './workPlatformFactories.js';

let t: TempDatabase;
let workspace: WorkspaceFixture;
const clock = makeClock(Date.UTC(2026, 10, 25, 9, 0, 0));
beforeEach(async () => {
  t = makeDatabase();
  workspace = await makeWorkspace(t.db);
});
afterEach(() => t.cleanup());

const eventTypes = () => (t.db.prepare('SELECT type FROM events ORDER BY rowid').all() as { type: string }[]).map((row) => row.type);

describe('CRM stores', () => {
  it('a deleted company detaches its contacts in the same transaction, each with contact.updated', async () => {
    const companies = createCompanyStore(t.db, { now: clock.now });
    const contacts = createContactStore(t.db, { now: clock.now });
    const company = await companies.createCompany(workspace.workspaceId, { name: 'Acme' }, workspace.actor);
    const contact = await contacts.createContact(workspace.workspaceId, { name: 'Ann', companyId: company.id }, workspace.actor);
    await companies.deleteCompany(workspace.workspaceId, company.id, 1, workspace.actor);
    expect(await contacts.getContact(workspace.workspaceId, contact.id)).toMatchObject({ companyId: null, version: 2 });
    expect(eventTypes()).toEqual(['company.created', 'contact.created', 'contact.updated', 'company.deleted']);
  });

  it('keeps deal_contacts in step with contactIds and removes them with the deal', async () => {
    const contacts = createContactStore(t.db, { now: clock.now });
    const deals = createDealStore(t.db, { now: clock.now });
    const a = (await contacts.createContact(workspace.workspaceId, { name: 'Ann' }, workspace.actor)).id;
    const b = (await contacts.createContact(workspace.workspaceId, { name: 'Bo' }, workspace.actor)).id;
    const pairs = () => t.db.prepare('SELECT contact_id AS contactId FROM deal_contacts ORDER BY contact_id').all();
    const deal = await deals.createDeal(workspace.workspaceId, { title: 'D', amountMinor: 0, currency: 'JPY', ownerId: workspace.ownerId, contactIds: [a] }, workspace.actor);
    await deals.updateDeal(workspace.workspaceId, deal.id, { contactIds: [b] }, 1, workspace.actor);
    expect(pairs()).toEqual([{ contactId: b }]);
    await deals.deleteDeal(workspace.workspaceId, deal.id, null, workspace.actor);
    expect(pairs()).toEqual([]);
  });

  it('refuses to delete a user who owns deals', async () => {
    const owner = await makeUser(t.db, workspace.workspaceId);
    const deals = createDealStore(t.db, { now: clock.now });
    const deal = await deals.createDeal(workspace.workspaceId, { title: 'D', amountMinor: 5, currency: 'EUR', ownerId: owner }, workspace.actor);
    await expect(createUserStore(t.db).deleteUser(owner)).rejects.toThrow(/1 deal is owned by/);
    await deals.updateDeal(workspace.workspaceId, deal.id, { ownerId: workspace.ownerId }, 1, workspace.actor);
    expect(await createUserStore(t.db).deleteUser(owner)).toEqual({ id: owner, workspaceId: workspace.workspaceId, flagged: { webhooks: [], connectors: [] } });
  });
});

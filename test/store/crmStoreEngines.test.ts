// The CRM and contract stores' behaviour on both engines: what they do on SQLite they do on
// PostgreSQL, through the same code (src/store/engine.ts): references and delete rules, If-Match,
// the length CHECKs by name, keyset paging by every sort both ways, the contracts' view as of now
// (an overdue sent contract reads as expired, through engine.dialect.greatest) and its sweep, and one
// winner of two concurrent read-then-write decisions from two instances.
import { eq } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { companies, contacts, contracts, deals, events, users, workspaces } from '../../db/schema.js';
import { companyConstraintFields, companySorts, createCompanyStore } from '../../src/store/companies.js';
import { contactConstraintFields, contactSorts, createContactStore } from '../../src/store/contacts.js';
import { contractConstraintFields, contractSorts, createContractStore, expiryInstantOf, type Contract } from '../../src/store/contracts.js';
import { createDealStore, dealConstraintFields, dealSorts } from '../../src/store/deals.js';
import type { StoreEngine } from '../../src/store/engine.js';
import type { KeysetAfter, KeysetPage, SortOrder } from '../../src/store/keysetPages.js';
import { ContractStateError, NotFoundError, StorageLimitError, VersionConflictError } from '../../src/store/workPlatformErrors.js';
import { changeWriter } from '../../src/store/workPlatformValues.js';
import { storeEngines, type OpenedEngine } from '../support/engines.js';

const actor = { id: 'usr_owner', kind: 'USER' } as const;
const owner = 'ten_main_owner';
const day = 86_400_000;

async function seedWorkspace(engine: StoreEngine, id: string): Promise<void> {
  await engine.write(async () => {
    await engine.statement(engine.orm.insert(workspaces).values({ id, name: id, plan: 'free', createdAt: 1 })).run({});
    await engine.statement(engine.orm.insert(users).values({ id: `${id}_owner`, workspaceId: id, role: 'owner', createdAt: 1 })).run({});
  });
}

function crmStores(engine: StoreEngine, now: () => number) {
  return {
    companies: createCompanyStore(engine, { now }),
    contacts: createContactStore(engine, { now }),
    deals: createDealStore(engine, { now }),
    contracts: createContractStore(engine, { now }),
  };
}
type CrmStores = ReturnType<typeof crmStores>;

type Listed = { id: string; createdAt: string; updatedAt: string } & Record<string, unknown>;
type ListOf = (sort: string, order: SortOrder, after: KeysetAfter | null) => Promise<KeysetPage<Listed>>;

/** Every item of a list, page by page (two per page). */
async function everyPage(list: ListOf, sort: string, order: SortOrder): Promise<Listed[]> {
  const items: Listed[] = [];
  let after: KeysetAfter | null = null;
  do {
    const page: KeysetPage<Listed> = await list(sort, order, after);
    items.push(...page.items);
    after = page.nextAfter;
  } while (after);
  return items;
}

function sortKeyOf(item: Listed, sort: string): string | number {
  return sort === 'createdAt' || sort === 'updatedAt' ? Date.parse(item[sort]) : (item[sort] as string | number);
}

/** Ascending by (key, id), text by code point (JavaScript's `<` on these BMP strings). */
function compareByKey(sort: string) {
  return (a: Listed, b: Listed): number => {
    const [x, y] = [sortKeyOf(a, sort), sortKeyOf(b, sort)];
    if (x !== y) return x < y ? -1 : 1;
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  };
}

describe.each(storeEngines)('CRM and contract stores on $name', (engineCase) => {
  let opened: OpenedEngine;
  let engine: StoreEngine;
  let stores: CrmStores;
  let at: number;
  const now = () => (at += 1000);

  beforeEach(async () => {
    opened = await engineCase.open({ retryDelayMs: () => 0 });
    engine = opened.engine;
    at = Date.UTC(2026, 10, 23, 9, 41);
    await seedWorkspace(engine, 'ten_main');
    await seedWorkspace(engine, 'ten_other');
    stores = crmStores(engine, now);
  });
  afterEach(() => opened.close());

  /** The stores of a second instance on the same data (SQLite: the same connection, whose writes queue). */
  async function otherInstance(): Promise<CrmStores> {
    return engineCase.name === 'PostgreSQL' ? crmStores(await opened.openAnother(), now) : stores;
  }

  async function eventTypes(): Promise<string[]> {
    const rows = await engine.statement<{ type: string }>(engine.orm.select({ type: events.type }).from(events)).objects({});
    return rows.map((row) => row.type).sort();
  }

  it('creates, reads, updates with If-Match and deletes companies, contacts and deals, keeping their references and delete rules', async () => {
    const company = await stores.companies.createCompany('ten_main', { name: 'Acme', domain: 'acme.example' }, actor);
    expect(await stores.companies.getCompany('ten_main', company.id)).toEqual(company);
    expect(await stores.companies.getCompany('ten_other', company.id)).toBeUndefined();
    const renamed = await stores.companies.updateCompany('ten_main', company.id, { name: 'Acme Ltd', description: null }, 1, actor);
    expect(renamed).toMatchObject({ version: 2, name: 'Acme Ltd', domain: 'acme.example' });
    await expect(stores.companies.updateCompany('ten_main', company.id, { name: 'Stale' }, 1, actor)).rejects.toBeInstanceOf(VersionConflictError);
    expect(await stores.companies.updateCompany('ten_main', company.id, { name: 'Acme Ltd' }, 2, actor)).toEqual(renamed);
    const otherCompany = await stores.companies.createCompany('ten_other', { name: 'Elsewhere' }, actor);

    const contact = await stores.contacts.createContact('ten_main', { name: 'Ann', email: 'ann@acme.example', companyId: company.id }, actor);
    expect(await stores.contacts.getContact('ten_main', contact.id)).toEqual(contact);
    await expect(stores.contacts.createContact('ten_main', { name: 'Lost', companyId: otherCompany.id }, actor)).rejects.toBeInstanceOf(NotFoundError);

    const deal = await stores.deals.createDeal(
      'ten_main',
      { title: 'Licence', amountMinor: Number.MAX_SAFE_INTEGER, currency: 'EUR', ownerId: owner, companyId: company.id, contactIds: [contact.id], expectedCloseOn: '2026-12-31' },
      actor,
    );
    expect(await stores.deals.getDeal('ten_main', deal.id)).toEqual(deal);
    expect(deal).toMatchObject({ amountMinor: Number.MAX_SAFE_INTEGER, contactIds: [contact.id], stage: 'lead' });
    await expect(stores.deals.createDeal('ten_main', { title: 'Lost', amountMinor: 1, currency: 'EUR', ownerId: 'ten_other_owner' }, actor)).rejects.toBeInstanceOf(
      NotFoundError,
    );
    const moved = await stores.deals.updateDeal('ten_main', deal.id, { stage: 'won' }, 1, actor);
    expect(moved).toMatchObject({ version: 2, stage: 'won' });
    await expect(stores.deals.updateDeal('ten_main', deal.id, { stage: 'lost' }, 1, actor)).rejects.toBeInstanceOf(VersionConflictError);

    await expect(stores.contacts.deleteContact('ten_main', contact.id, null, actor)).rejects.toMatchObject({ code: 'contact-has-deals', count: 1 });
    await expect(stores.companies.deleteCompany('ten_main', company.id, null, actor)).rejects.toMatchObject({ code: 'company-has-deals', count: 1 });
    await stores.deals.deleteDeal('ten_main', deal.id, 2, actor);
    await expect(stores.companies.deleteCompany('ten_main', company.id, 1, actor)).rejects.toBeInstanceOf(VersionConflictError);
    expect(await stores.companies.deleteCompany('ten_main', company.id, 2, actor)).toEqual(renamed);
    expect(await stores.companies.getCompany('ten_main', company.id)).toBeUndefined();
    // Its contact stays, detached, with a new version and its own event.
    expect(await stores.contacts.getContact('ten_main', contact.id)).toMatchObject({ companyId: null, version: 2 });
    expect(await stores.contacts.deleteContact('ten_main', contact.id, 2, actor)).toMatchObject({ id: contact.id, version: 2 });

    expect(await eventTypes()).toEqual(
      [
        'company.created',
        'company.updated',
        'company.created',
        'contact.created',
        'deal.created',
        'deal.updated',
        'deal.stage_changed',
        'deal.deleted',
        'contact.updated',
        'company.deleted',
        'contact.deleted',
      ].sort(),
    );
  });

  it('refuses to delete a company or a deal that a contract names', async () => {
    const company = await stores.companies.createCompany('ten_main', { name: 'Contracted' }, actor);
    const dealCompany = await stores.companies.createCompany('ten_main', { name: 'Dealt' }, actor);
    const deal = await stores.deals.createDeal('ten_main', { title: 'D', amountMinor: 5, currency: 'EUR', ownerId: owner, companyId: dealCompany.id }, actor);
    await stores.contracts.createContract('ten_main', { title: 'Terms', companyId: company.id, expiresOn: '2026-12-31' }, actor);
    const ofDeal = await stores.contracts.createContract('ten_main', { title: 'Deal terms', dealId: deal.id, expiresOn: '2026-12-31' }, actor);
    // A deal's company fills a company not given.
    expect(ofDeal.companyId).toBe(dealCompany.id);
    await expect(stores.companies.deleteCompany('ten_main', company.id, null, actor)).rejects.toMatchObject({ code: 'company-has-contracts', count: 1 });
    await expect(stores.deals.deleteDeal('ten_main', deal.id, null, actor)).rejects.toMatchObject({ code: 'deal-has-contracts', count: 1 });
    await expect(stores.contracts.createContract('ten_main', { title: 'Lost', dealId: 'del_missing', expiresOn: '2026-12-31' }, actor)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('turns a failed length CHECK into StorageLimitError under the names the stores expect, on both engines', async () => {
    const company = await stores.companies.createCompany('ten_main', { name: 'Acme' }, actor);
    const contact = await stores.contacts.createContact('ten_main', { name: 'Ann' }, actor);
    const deal = await stores.deals.createDeal('ten_main', { title: 'D', amountMinor: 5, currency: 'EUR', ownerId: owner }, actor);
    const contract = await stores.contracts.createContract('ten_main', { title: 'T', companyId: company.id, expiresOn: '2026-12-31' }, actor);
    const tables = [
      { table: companies, id: company.id, fields: companyConstraintFields },
      { table: contacts, id: contact.id, fields: contactConstraintFields },
      { table: deals, id: deal.id, fields: dealConstraintFields },
      { table: contracts, id: contract.id, fields: contractConstraintFields },
    ];
    for (const { table, id, fields } of tables) {
      for (const { field, limit } of Object.values(fields)) {
        const tooLong = engine.statement(engine.orm.update(table).set({ [field]: 'x'.repeat(limit + 1) }).where(eq(table.id, id)));
        await expect(changeWriter(engine, fields)(() => tooLong.run({}))).rejects.toMatchObject({ kind: 'storage-limit-exceeded', field, limit });
      }
    }
    // The stores refuse the same before they write.
    await expect(stores.companies.createCompany('ten_main', { name: 'x'.repeat(companyConstraintFields.companies_name_length!.limit + 1) }, actor)).rejects.toBeInstanceOf(
      StorageLimitError,
    );
  });

  const listCases = [
    ...companySorts.map((sort) => ['companies', sort] as const),
    ...contactSorts.map((sort) => ['contacts', sort] as const),
    ...dealSorts.map((sort) => ['deals', sort] as const),
    ...contractSorts.map((sort) => ['contracts', sort] as const),
  ];

  it.each(listCases)('pages through every one of the %s exactly once sorted by %s, both ways, in code-point order', async (collection, sort) => {
    const names = ['b', 'A', 'a', 'Z', 'é', 'b'];
    const companyId = (await stores.companies.createCompany('ten_main', { name: 'Parent' }, actor)).id;
    for (const [index, name] of names.entries()) {
      // Some creations share an instant: ties on createdAt and updatedAt too.
      if (index % 2 === 0) at -= 1000;
      if (collection === 'companies') {
        const company = await stores.companies.createCompany('ten_main', { name }, actor);
        if (index % 3 === 0) await stores.companies.updateCompany('ten_main', company.id, { domain: `${index}.example` }, 1, actor);
      } else if (collection === 'contacts') {
        const contact = await stores.contacts.createContact('ten_main', { name }, actor);
        if (index % 3 === 0) await stores.contacts.updateContact('ten_main', contact.id, { phone: `+${index}` }, 1, actor);
      } else if (collection === 'deals') {
        const deal = await stores.deals.createDeal('ten_main', { title: name, amountMinor: (index % 3) * 100, currency: 'EUR', ownerId: owner }, actor);
        if (index % 3 === 0) await stores.deals.updateDeal('ten_main', deal.id, { stage: 'won' }, 1, actor);
      } else {
        const contract = await stores.contracts.createContract('ten_main', { title: name, companyId, expiresOn: index < 4 ? '2026-11-23' : '2026-12-01' }, actor);
        if (index % 3 === 0) await stores.contracts.moveContract('ten_main', contract.id, 'send', 1, actor);
      }
    }
    // Both sent contracts are past their day now: their updatedAt is the view's (a tie), not the row's.
    at = Date.UTC(2026, 10, 25);
    const list: ListOf = (listSort, order, after) => {
      const options = { sort: listSort as never, order, limit: 2, after };
      if (collection === 'companies') return stores.companies.listCompanies('ten_main', options);
      if (collection === 'contacts') return stores.contacts.listContacts('ten_main', options);
      if (collection === 'deals') return stores.deals.listDeals('ten_main', options);
      return stores.contracts.listContracts('ten_main', options);
    };
    const ascending = await everyPage(list, sort, 'asc');
    const descending = await everyPage(list, sort, 'desc');
    const expectedCount = collection === 'companies' ? names.length + 1 : names.length;
    expect(new Set(ascending.map((item) => item.id)).size).toBe(expectedCount);
    expect(ascending.map((item) => item.id)).toEqual([...ascending].sort(compareByKey(sort)).map((item) => item.id));
    expect(descending.map((item) => item.id)).toEqual(ascending.map((item) => item.id).reverse());
  });

  it('narrows the lists by their filters, the contracts by their status as of now', async () => {
    const company = await stores.companies.createCompany('ten_main', { name: 'Acme' }, actor);
    const inCompany = await stores.contacts.createContact('ten_main', { name: 'In', companyId: company.id }, actor);
    await stores.contacts.createContact('ten_main', { name: 'Out' }, actor);
    const since = at + 1;
    const won = await stores.deals.createDeal('ten_main', { title: 'Won', stage: 'won', amountMinor: 1, currency: 'EUR', ownerId: owner }, actor);
    await stores.deals.createDeal('ten_main', { title: 'Lead', amountMinor: 1, currency: 'EUR', ownerId: owner, companyId: company.id }, actor);
    const lapsing = await stores.contracts.createContract('ten_main', { title: 'Lapsing', companyId: company.id, expiresOn: '2026-11-23' }, actor);
    await stores.contracts.moveContract('ten_main', lapsing.id, 'send', 1, actor);
    const lasting = await stores.contracts.createContract('ten_main', { title: 'Lasting', companyId: company.id, expiresOn: '2026-11-30' }, actor);
    await stores.contracts.moveContract('ten_main', lasting.id, 'send', 1, actor);
    const page = { sort: 'createdAt', order: 'asc', limit: 10, after: null } as const;
    const ids = (listed: KeysetPage<{ id: string }>) => listed.items.map((item) => item.id);

    expect(ids(await stores.contacts.listContacts('ten_main', { ...page, companyId: company.id }))).toEqual([inCompany.id]);
    expect(ids(await stores.deals.listDeals('ten_main', { ...page, stage: 'won' }))).toEqual([won.id]);
    expect(ids(await stores.deals.listDeals('ten_main', { ...page, updatedSince: since }))).toHaveLength(2);
    expect(ids(await stores.contracts.listContracts('ten_main', { ...page, status: 'sent' }))).toEqual([lapsing.id, lasting.id]);
    at = expiryInstantOf('2026-11-23');
    const afterSending = at;
    expect(ids(await stores.contracts.listContracts('ten_main', { ...page, status: 'sent' }))).toEqual([lasting.id]);
    expect(ids(await stores.contracts.listContracts('ten_main', { ...page, status: 'expired' }))).toEqual([lapsing.id]);
    // The lapsed one was last changed when it expired, after the other was sent.
    expect(ids(await stores.contracts.listContracts('ten_main', { ...page, updatedSince: afterSending }))).toEqual([lapsing.id]);
  });

  it('reads a sent contract past its day as expired (at the later of its last change and its expiry) before the sweep records exactly that, once', async () => {
    const company = await stores.companies.createCompany('ten_main', { name: 'Acme' }, actor);
    const created = await stores.contracts.createContract('ten_main', { title: 'Lapsing', companyId: company.id, expiresOn: '2026-11-23' }, actor);
    const sent = await stores.contracts.moveContract('ten_main', created.id, 'send', 1, actor);
    // A sent row last changed after its expiry instant (as a clock behind another host's could leave it): greatest() picks the change.
    const changedLate = Date.UTC(2026, 10, 22, 12);
    await engine.statement(
      engine.orm.insert(contracts).values({
        id: 'ctr_changedAfterItsExpiry',
        workspaceId: 'ten_main',
        title: 'Late',
        status: 'sent',
        companyId: company.id,
        expiresOn: '2026-11-20',
        expiresAt: expiryInstantOf('2026-11-20'),
        sentAt: changedLate,
        version: 2,
        createdAt: changedLate,
        updatedAt: changedLate,
      }),
    ).run({});

    at = Date.UTC(2026, 10, 25);
    const expiry = expiryInstantOf('2026-11-23');
    const shown = (await stores.contracts.getContract('ten_main', sent.id))!;
    expect(shown).toEqual({ ...sent, status: 'expired', expiredAt: new Date(expiry).toISOString(), updatedAt: new Date(expiry).toISOString(), version: 3 });
    const late = (await stores.contracts.getContract('ten_main', 'ctr_changedAfterItsExpiry'))!;
    expect(late).toMatchObject({ status: 'expired', expiredAt: new Date(changedLate).toISOString(), updatedAt: new Date(changedLate).toISOString(), version: 3 });
    const listed = await stores.contracts.listContracts('ten_main', { sort: 'updatedAt', order: 'desc', limit: 10, after: null, status: 'expired' });
    expect(listed.items).toEqual([shown, late]);

    expect(await stores.contracts.expireOverdueContracts()).toBe(2);
    expect(await stores.contracts.getContract('ten_main', sent.id)).toEqual(shown);
    expect(await stores.contracts.getContract('ten_main', late.id)).toEqual(late);
    expect(await stores.contracts.expireOverdueContracts()).toBe(0);
    expect((await eventTypes()).filter((type) => type === 'contract.expired')).toHaveLength(2);
    await expect(stores.contracts.moveContract('ten_main', sent.id, 'sign', null, actor)).rejects.toMatchObject({ code: 'contract-expired' });
  });

  it('moves a contract through its lifecycle, refusing the moves its status does not allow', async () => {
    const company = await stores.companies.createCompany('ten_main', { name: 'Acme' }, actor);
    const draft = await stores.contracts.createContract('ten_main', { title: 'Terms', companyId: company.id, amountMinor: 100, currency: 'EUR', expiresOn: '2026-12-31' }, actor);
    await expect(stores.contracts.moveContract('ten_main', draft.id, 'sign', null, actor)).rejects.toMatchObject({ code: 'contract-not-sent' });
    const sent = await stores.contracts.moveContract('ten_main', draft.id, 'send', 1, actor);
    await expect(stores.contracts.updateContract('ten_main', draft.id, { title: 'Changed' }, 2, actor)).rejects.toMatchObject({ code: 'contract-not-editable' });
    await expect(stores.contracts.moveContract('ten_main', draft.id, 'withdraw', 1, actor)).rejects.toBeInstanceOf(VersionConflictError);
    const withdrawn = await stores.contracts.moveContract('ten_main', draft.id, 'withdraw', 2, actor);
    expect(withdrawn).toMatchObject({ status: 'draft', sentAt: null, version: 3 });
    const edited = await stores.contracts.updateContract('ten_main', draft.id, { body: 'Net 30' }, 3, actor);
    await stores.contracts.moveContract('ten_main', draft.id, 'send', edited.version, actor);
    const signed = await stores.contracts.moveContract('ten_main', draft.id, 'sign', null, actor);
    expect(signed).toMatchObject({ status: 'signed', version: 6, body: 'Net 30', sentAt: expect.any(String), signedAt: signed.updatedAt });
    expect(sent.sentAt).not.toBeNull();
    await expect(stores.contracts.moveContract('ten_main', draft.id, 'decline', null, actor)).rejects.toMatchObject({ code: 'contract-already-signed' });
    await expect(stores.contracts.deleteContract('ten_main', draft.id, null, actor)).rejects.toMatchObject({ code: 'contract-not-deletable' });
    const other = await stores.contracts.createContract('ten_main', { title: 'Other', companyId: company.id, expiresOn: '2026-12-31' }, actor);
    expect(await stores.contracts.deleteContract('ten_main', other.id, 1, actor)).toEqual(other);
    expect(await stores.contracts.getContract('ten_main', other.id)).toBeUndefined();
  });

  it('lets one of two instances sign or decline a sent contract at once; the other finds it already moved', async () => {
    const other = await otherInstance();
    const company = await stores.companies.createCompany('ten_main', { name: 'Acme' }, actor);
    const contract = await stores.contracts.createContract('ten_main', { title: 'Contended', companyId: company.id, expiresOn: '2026-12-31' }, actor);
    await stores.contracts.moveContract('ten_main', contract.id, 'send', 1, actor);
    const results = await Promise.allSettled([
      stores.contracts.moveContract('ten_main', contract.id, 'sign', null, actor),
      other.contracts.moveContract('ten_main', contract.id, 'decline', null, actor),
    ]);
    const fulfilled = results.filter((result): result is PromiseFulfilledResult<Contract> => result.status === 'fulfilled');
    expect(fulfilled).toHaveLength(1);
    const rejected = results.find((result) => result.status === 'rejected') as PromiseRejectedResult;
    expect(rejected.reason).toBeInstanceOf(ContractStateError);
    expect((rejected.reason as ContractStateError).code).toBe(fulfilled[0]!.value.status === 'signed' ? 'contract-already-signed' : 'contract-already-declined');
    expect((await stores.contracts.getContract('ten_main', contract.id))!).toMatchObject({ version: 3, status: fulfilled[0]!.value.status });
    expect((await eventTypes()).filter((type) => type === 'contract.signed' || type === 'contract.declined')).toHaveLength(1);
  });

  it('never leaves a deal naming a deleted company when the delete and the deal come from two instances at once', async () => {
    const other = await otherInstance();
    const company = await stores.companies.createCompany('ten_main', { name: 'Contended' }, actor);
    const [deleted, created] = await Promise.allSettled([
      stores.companies.deleteCompany('ten_main', company.id, 1, actor),
      other.deals.createDeal('ten_main', { title: 'Racing', amountMinor: 1, currency: 'EUR', ownerId: owner, companyId: company.id }, actor),
    ]);
    expect([deleted.status, created.status].sort()).toEqual(['fulfilled', 'rejected']);
    const remainingDeals = (await stores.deals.listDeals('ten_main', { sort: 'createdAt', order: 'asc', limit: 10, after: null })).items;
    if (deleted.status === 'fulfilled') {
      expect((created as PromiseRejectedResult).reason).toBeInstanceOf(NotFoundError);
      expect(remainingDeals).toEqual([]);
    } else {
      expect(deleted.reason).toMatchObject({ code: 'company-has-deals', count: 1 });
      expect(remainingDeals.map((deal) => deal.companyId)).toEqual([company.id]);
      expect(await stores.companies.getCompany('ten_main', company.id)).toEqual(company);
    }
  });
});

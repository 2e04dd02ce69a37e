// Companies of the CRM. Every read and write is scoped by workspace (another workspace's company
// is "not found"), every change bumps `version` by one and records its outbox event(s) in the
// same transaction. A company that deals name cannot be deleted; its contacts are detached.
import type { components } from '../../generated/work-platform/types.js';
import { sortFields } from '../../generated/work-platform/rules.js';
import type BetterSqlite3 from 'better-sqlite3';
import { and, asc, count, eq, gte, sql } from 'drizzle-orm';
import { companies, contacts, contracts, deals, storageLimits } from '../../db/schema.js';
import { toContact } from './contacts.js';
import { filteredKeysetList, type FilteredListOptions } from './crmLists.js';
import { drizzleFor, placeholdersFor } from './drizzle.js';
import { defaultRandomBytes, newId, type RandomBytes } from './ids.js';
import type { KeysetPage, SortKeyDefinition } from './keysetPages.js';
import { createOutboxWriter, type EventActor } from './outboxEvents.js';
import { InUseError, InvalidValueError } from './workPlatformErrors.js';
import { checkText, formatTimestamp, immediateWriter, versionedRow, type ConstraintFields } from './workPlatformValues.js';

export type Company = components['schemas']['Company'];
export type CreateCompanyInput = components['schemas']['CompanyCreate'];
export type UpdateCompanyInput = components['schemas']['CompanyUpdate'];

/** The fields the list sorts by: the contract's `CompanySort` parameter. */
export const companySorts = sortFields.CompanySort;
export type CompanySort = (typeof companySorts)[number];
export type CompanyListOptions = FilteredListOptions<CompanySort, 'updatedSince'>;

export interface CompanyStoreOptions {
  now?: () => number;
  randomBytes?: RandomBytes;
}

export interface CompanyStore {
  createCompany(workspaceId: string, input: CreateCompanyInput, actor: EventActor): Company;
  /** Undefined when missing or in another workspace. */
  getCompany(workspaceId: string, id: string): Company | undefined;
  /** Applies the given members when `expectedVersion` is current; a patch that changes nothing writes nothing. */
  updateCompany(workspaceId: string, id: string, patch: UpdateCompanyInput, expectedVersion: number, actor: EventActor): Company;
  /**
   * Deletes a company that no deal or contract names (else InUseError `company-has-deals`, `company-has-contracts`); its contacts lose
   * their companyId, each with a new version and a contact.updated event. Returns the company as it was.
   */
  deleteCompany(workspaceId: string, id: string, expectedVersion: number | null, actor: EventActor): Company;
  /** `updatedSince` in milliseconds since the epoch. */
  listCompanies(workspaceId: string, options: CompanyListOptions): KeysetPage<Company>;
}

type CompanyRow = typeof companies.$inferSelect;

export function toCompany(row: Omit<CompanyRow, 'workspaceId'>): Company {
  const createdAt = formatTimestamp(row.createdAt);
  return {
    id: row.id,
    name: row.name,
    domain: row.domain,
    description: row.description,
    version: row.version,
    createdAt,
    updatedAt: row.updatedAt === row.createdAt ? createdAt : formatTimestamp(row.updatedAt),
  };
}

type ListedCompanyRow = [
  id: string,
  sortKey: string | number,
  name: string,
  domain: string | null,
  description: string | null,
  version: number,
  createdAt: number,
  updatedAt: number,
];

const sortKeys: Record<CompanySort, SortKeyDefinition> = {
  createdAt: { expression: companies.createdAt, keyType: 'number' },
  updatedAt: { expression: companies.updatedAt, keyType: 'number' },
  name: { expression: companies.name, keyType: 'string' },
};

const constraintFields: ConstraintFields = {
  companies_name_length: { field: 'name', limit: storageLimits.companyName },
  companies_domain_length: { field: 'domain', limit: storageLimits.companyDomain },
  companies_description_length: { field: 'description', limit: storageLimits.companyDescription },
};

function checkCompanyValues(input: UpdateCompanyInput): void {
  if (input.name !== undefined) checkText('name', input.name, storageLimits.companyName, { allowEmpty: false });
  if (input.domain !== undefined && input.domain !== null) checkText('domain', input.domain, storageLimits.companyDomain, { allowEmpty: false });
  if (input.description !== undefined && input.description !== null) {
    checkText('description', input.description, storageLimits.companyDescription, { allowEmpty: true });
  }
}

export function createCompanyStore(db: BetterSqlite3.Database, options: CompanyStoreOptions = {}): CompanyStore {
  const now = options.now ?? Date.now;
  const randomBytes = options.randomBytes ?? defaultRandomBytes;
  const orm = drizzleFor(db);
  const outbox = createOutboxWriter(db, randomBytes);

  const inWorkspace = and(eq(companies.workspaceId, sql.placeholder('workspaceId')), eq(companies.id, sql.placeholder('id')));
  const selectOne = orm.select().from(companies).where(inWorkspace).prepare();
  const insert = orm.insert(companies).values(placeholdersFor(companies)).prepare();
  const update = orm
    .update(companies)
    .set({
      name: sql`${sql.placeholder('name')}`,
      domain: sql`${sql.placeholder('domain')}`,
      description: sql`${sql.placeholder('description')}`,
      version: sql`${sql.placeholder('version')}`,
      updatedAt: sql`${sql.placeholder('updatedAt')}`,
    })
    .where(inWorkspace)
    .prepare();
  const remove = orm.delete(companies).where(inWorkspace).prepare();
  const countDeals = orm
    .select({ count: count() })
    .from(deals)
    .where(and(eq(deals.workspaceId, sql.placeholder('workspaceId')), eq(deals.companyId, sql.placeholder('id'))))
    .prepare();
  const countContracts = orm
    .select({ count: count() })
    .from(contracts)
    .where(and(eq(contracts.workspaceId, sql.placeholder('workspaceId')), eq(contracts.companyId, sql.placeholder('id'))))
    .prepare();
  const contactsOf = orm
    .select()
    .from(contacts)
    .where(and(eq(contacts.workspaceId, sql.placeholder('workspaceId')), eq(contacts.companyId, sql.placeholder('id'))))
    .orderBy(asc(contacts.id))
    .prepare();
  const detachContact = orm
    .update(contacts)
    .set({ companyId: null, version: sql`${contacts.version} + 1`, updatedAt: sql`${sql.placeholder('updatedAt')}` })
    .where(and(eq(contacts.workspaceId, sql.placeholder('workspaceId')), eq(contacts.id, sql.placeholder('id'))))
    .prepare();

  const list = filteredKeysetList(db, {
    table: companies,
    idColumn: companies.id,
    workspaceColumn: companies.workspaceId,
    columns: {
      name: companies.name,
      domain: companies.domain,
      description: companies.description,
      version: companies.version,
      createdAt: companies.createdAt,
      updatedAt: companies.updatedAt,
    },
    sortKeys,
    filters: { updatedSince: gte(companies.updatedAt, sql.placeholder('updatedSince')) },
    toItem: ([id, , name, domain, description, version, createdAt, updatedAt]: ListedCompanyRow) =>
      toCompany({ id, name, domain, description, version, createdAt, updatedAt }),
  });

  const write = immediateWriter(orm, constraintFields);
  const currentRow = (workspaceId: string, id: string, expectedVersion: number | null): CompanyRow =>
    versionedRow('company', id, selectOne.get({ workspaceId, id }), expectedVersion);

  return {
    createCompany(workspaceId, input, actor) {
      if (input.name === undefined) throw new InvalidValueError('name', 'is required.');
      checkCompanyValues(input);
      const at = now();
      const row: CompanyRow = {
        id: newId('cmp', randomBytes),
        workspaceId,
        name: input.name,
        domain: input.domain ?? null,
        description: input.description ?? null,
        version: 1,
        createdAt: at,
        updatedAt: at,
      };
      return write(() => {
        insert.run(row);
        const company = toCompany(row);
        outbox.record(workspaceId, 'company.created', actor, at, company);
        return company;
      });
    },

    getCompany(workspaceId, id) {
      const row = selectOne.get({ workspaceId, id });
      return row ? toCompany(row) : undefined;
    },

    updateCompany(workspaceId, id, patch, expectedVersion, actor) {
      checkCompanyValues(patch);
      return write(() => {
        const current = currentRow(workspaceId, id, expectedVersion);
        const next: CompanyRow = {
          ...current,
          name: patch.name ?? current.name,
          domain: patch.domain === undefined ? current.domain : patch.domain,
          description: patch.description === undefined ? current.description : patch.description,
        };
        const changed = (['name', 'domain', 'description'] as const).some((name) => next[name] !== current[name]);
        if (!changed) return toCompany(current);
        next.version = current.version + 1;
        next.updatedAt = now();
        update.run(next);
        const company = toCompany(next);
        outbox.record(workspaceId, 'company.updated', actor, next.updatedAt, company);
        return company;
      });
    },

    deleteCompany(workspaceId, id, expectedVersion, actor) {
      return write(() => {
        const current = currentRow(workspaceId, id, expectedVersion);
        const dealCount = countDeals.get({ workspaceId, id })?.count ?? 0;
        if (dealCount > 0) throw new InUseError('company-has-deals', id, dealCount);
        const contractCount = countContracts.get({ workspaceId, id })?.count ?? 0;
        if (contractCount > 0) throw new InUseError('company-has-contracts', id, contractCount);
        const at = now();
        for (const contact of contactsOf.all({ workspaceId, id })) {
          detachContact.run({ workspaceId, id: contact.id, updatedAt: at });
          const detached = toContact({ ...contact, companyId: null, version: contact.version + 1, updatedAt: at });
          outbox.record(workspaceId, 'contact.updated', actor, at, detached);
        }
        remove.run({ workspaceId, id });
        const company = toCompany(current);
        outbox.record(workspaceId, 'company.deleted', actor, at, company);
        return company;
      });
    },

    listCompanies: list,
  };
}

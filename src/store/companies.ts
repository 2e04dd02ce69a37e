// Companies of the CRM. Every read and write is scoped by workspace (another workspace's company
// is "not found"), every change bumps `version` by one and records its outbox event(s) in the
// same transaction. A company that deals name cannot be deleted; its contacts are detached.
import type { components } from '../../generated/work-platform/types.js';
import { sortFields } from '../../generated/work-platform/rules.js';
import { and, asc, count, eq, gte, sql } from 'drizzle-orm';
import { companies, contacts, contracts, deals, storageLimits } from '../../db/schema.js';
import { toContact } from './contacts.js';
import { engineFilteredKeysetList, type FilteredListOptions } from './crmLists.js';
import { placeholdersFor } from './drizzle.js';
import { engineOf, type StoreSource } from './engine.js';
import { defaultRandomBytes, newId, type RandomBytes } from './ids.js';
import type { KeysetPage, SortKeyDefinition } from './keysetPages.js';
import { createOutboxRecorder, type EventActor } from './outboxEvents.js';
import { InUseError, InvalidValueError } from './workPlatformErrors.js';
import { changeWriter, checkText, formatTimestamp, versionedRow, type ConstraintFields } from './workPlatformValues.js';

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
  createCompany(workspaceId: string, input: CreateCompanyInput, actor: EventActor): Promise<Company>;
  /** Undefined when missing or in another workspace. */
  getCompany(workspaceId: string, id: string): Promise<Company | undefined>;
  /** Applies the given members when `expectedVersion` is current; a patch that changes nothing writes nothing. */
  updateCompany(workspaceId: string, id: string, patch: UpdateCompanyInput, expectedVersion: number, actor: EventActor): Promise<Company>;
  /**
   * Deletes a company that no deal or contract names (else InUseError `company-has-deals`, `company-has-contracts`); its contacts lose
   * their companyId, each with a new version and a contact.updated event. Returns the company as it was.
   */
  deleteCompany(workspaceId: string, id: string, expectedVersion: number | null, actor: EventActor): Promise<Company>;
  /** `updatedSince` in milliseconds since the epoch. */
  listCompanies(workspaceId: string, options: CompanyListOptions): Promise<KeysetPage<Company>>;
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

/** The length CHECKs of the table, by constraint name (the same names on both engines). */
export const companyConstraintFields: ConstraintFields = {
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

export function createCompanyStore(source: StoreSource, options: CompanyStoreOptions = {}): CompanyStore {
  const now = options.now ?? Date.now;
  const randomBytes = options.randomBytes ?? defaultRandomBytes;
  const engine = engineOf(source);
  const { orm } = engine;
  const outbox = createOutboxRecorder(engine, randomBytes);

  const inWorkspace = and(eq(companies.workspaceId, sql.placeholder('workspaceId')), eq(companies.id, sql.placeholder('id')));
  const selectOne = engine.statement<CompanyRow>(orm.select().from(companies).where(inWorkspace));
  const insert = engine.statement(orm.insert(companies).values(placeholdersFor(companies)));
  const update = engine.statement(
    orm
      .update(companies)
      .set({
        name: sql`${sql.placeholder('name')}`,
        domain: sql`${sql.placeholder('domain')}`,
        description: sql`${sql.placeholder('description')}`,
        version: sql`${sql.placeholder('version')}`,
        updatedAt: sql`${sql.placeholder('updatedAt')}`,
      })
      .where(inWorkspace),
  );
  const remove = engine.statement(orm.delete(companies).where(inWorkspace));
  const countDeals = engine.statement<{ count: number }>(
    orm
      .select({ count: count() })
      .from(deals)
      .where(and(eq(deals.workspaceId, sql.placeholder('workspaceId')), eq(deals.companyId, sql.placeholder('id')))),
  );
  const countContracts = engine.statement<{ count: number }>(
    orm
      .select({ count: count() })
      .from(contracts)
      .where(and(eq(contracts.workspaceId, sql.placeholder('workspaceId')), eq(contracts.companyId, sql.placeholder('id')))),
  );
  const contactsOf = engine.statement<typeof contacts.$inferSelect>(
    orm
      .select()
      .from(contacts)
      .where(and(eq(contacts.workspaceId, sql.placeholder('workspaceId')), eq(contacts.companyId, sql.placeholder('id'))))
      .orderBy(asc(contacts.id)),
  );
  const detachContact = engine.statement(
    orm
      .update(contacts)
      .set({ companyId: null, version: sql`${contacts.version} + 1`, updatedAt: sql`${sql.placeholder('updatedAt')}` })
      .where(and(eq(contacts.workspaceId, sql.placeholder('workspaceId')), eq(contacts.id, sql.placeholder('id')))),
  );

  const list = engineFilteredKeysetList(engine, {
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

  const write = changeWriter(engine, companyConstraintFields);
  const currentRow = async (workspaceId: string, id: string, expectedVersion: number | null): Promise<CompanyRow> =>
    versionedRow('company', id, await selectOne.object({ workspaceId, id }), expectedVersion);

  return {
    async createCompany(workspaceId, input, actor) {
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
      return write(async () => {
        await insert.run(row);
        const company = toCompany(row);
        await outbox.record(workspaceId, 'company.created', actor, at, company);
        return company;
      });
    },

    async getCompany(workspaceId, id) {
      const row = await engine.read(() => selectOne.object({ workspaceId, id }));
      return row ? toCompany(row) : undefined;
    },

    async updateCompany(workspaceId, id, patch, expectedVersion, actor) {
      checkCompanyValues(patch);
      return write(async () => {
        const current = await currentRow(workspaceId, id, expectedVersion);
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
        await update.run(next);
        const company = toCompany(next);
        await outbox.record(workspaceId, 'company.updated', actor, next.updatedAt, company);
        return company;
      });
    },

    async deleteCompany(workspaceId, id, expectedVersion, actor) {
      return write(async () => {
        const current = await currentRow(workspaceId, id, expectedVersion);
        const dealCount = (await countDeals.object({ workspaceId, id }))?.count ?? 0;
        if (dealCount > 0) throw new InUseError('company-has-deals', id, dealCount);
        const contractCount = (await countContracts.object({ workspaceId, id }))?.count ?? 0;
        if (contractCount > 0) throw new InUseError('company-has-contracts', id, contractCount);
        const at = now();
        for (const contact of await contactsOf.objects({ workspaceId, id })) {
          await detachContact.run({ workspaceId, id: contact.id, updatedAt: at });
          const detached = toContact({ ...contact, companyId: null, version: contact.version + 1, updatedAt: at });
          await outbox.record(workspaceId, 'contact.updated', actor, at, detached);
        }
        await remove.run({ workspaceId, id });
        const company = toCompany(current);
        await outbox.record(workspaceId, 'company.deleted', actor, at, company);
        return company;
      });
    },

    listCompanies: list,
  };
}

// Companies of the CRM, a versioned resource (versionedResources.ts). A company that deals or
// contracts name cannot be deleted; its contacts are detached.
import type { components } from '../../generated/work-platform/types.js';
import { sortFields } from '../../generated/work-platform/rules.js';
import { and, asc, eq, gte, sql } from 'drizzle-orm';
import { companies, contacts, contracts, deals, storageLimits } from '../../db/schema.js';
import { toContact } from './contacts.js';
import { engineOf, type StoreSource } from './engine.js';
import type { FilteredListOptions } from './filteredLists.js';
import { defaultRandomBytes, newId } from './ids.js';
import type { SortKeyDefinition } from './keysetPages.js';
import { referenceCounter, versionedResource, type VersionedResourceOptions, type VersionedStore } from './versionedResources.js';
import { InUseError, InvalidValueError } from './workPlatformErrors.js';
import { checkText, formatTimestamp, type ConstraintFields } from './workPlatformValues.js';

export type Company = components['schemas']['Company'];
export type CreateCompanyInput = components['schemas']['CompanyCreate'];
export type UpdateCompanyInput = components['schemas']['CompanyUpdate'];

/** The fields the list sorts by: the contract's `CompanySort` parameter. */
export const companySorts = sortFields.CompanySort;
export type CompanySort = (typeof companySorts)[number];
export type CompanyListOptions = FilteredListOptions<CompanySort, 'updatedSince'>;

export type CompanyStoreOptions = VersionedResourceOptions;

/** Deleting a company that a deal or contract names is an InUseError (`company-has-deals`, `company-has-contracts`); its contacts lose their companyId, each with a new version and a contact.updated event. */
export type CompanyStore = VersionedStore<'Company', 'Companies', Company, CreateCompanyInput, UpdateCompanyInput, CompanyListOptions>;

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
  const engine = engineOf(source);
  const { orm } = engine;
  const resource = versionedResource(
    engine,
    {
      table: companies,
      entity: 'company',
      constraintFields: companyConstraintFields,
      toItem: toCompany,
      sortKeys,
      filters: { updatedSince: gte(companies.updatedAt, sql.placeholder('updatedSince')) },
    },
    options,
  );
  const { now, outbox } = resource;

  const countDeals = referenceCounter(engine, deals, deals.companyId);
  const countContracts = referenceCounter(engine, contracts, contracts.companyId);
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

  return {
    async createCompany(workspaceId, input, actor) {
      if (input.name === undefined) throw new InvalidValueError('name', 'is required.');
      checkCompanyValues(input);
      const at = now();
      return resource.create(
        {
          id: newId('cmp', options.randomBytes ?? defaultRandomBytes),
          workspaceId,
          name: input.name,
          domain: input.domain ?? null,
          description: input.description ?? null,
          version: 1,
          createdAt: at,
          updatedAt: at,
        },
        actor,
      );
    },

    getCompany: resource.get,

    async updateCompany(workspaceId, id, patch, expectedVersion, actor) {
      checkCompanyValues(patch);
      return resource.update(workspaceId, id, expectedVersion, actor, {
        apply: (current) => ({
          ...current,
          name: patch.name ?? current.name,
          domain: patch.domain === undefined ? current.domain : patch.domain,
          description: patch.description === undefined ? current.description : patch.description,
        }),
        fields: ['name', 'domain', 'description'],
      });
    },

    async deleteCompany(workspaceId, id, expectedVersion, actor) {
      return resource.delete(workspaceId, id, expectedVersion, actor, {
        async check() {
          const dealCount = await countDeals(workspaceId, id);
          if (dealCount > 0) throw new InUseError('company-has-deals', id, dealCount);
          const contractCount = await countContracts(workspaceId, id);
          if (contractCount > 0) throw new InUseError('company-has-contracts', id, contractCount);
        },
        async cascade(_company, at) {
          for (const contact of await contactsOf.objects({ workspaceId, id })) {
            await detachContact.run({ workspaceId, id: contact.id, updatedAt: at });
            const detached = toContact({ ...contact, companyId: null, version: contact.version + 1, updatedAt: at });
            await outbox.record(workspaceId, 'contact.updated', actor, at, detached);
          }
        },
      });
    },

    listCompanies: resource.list,
  };
}

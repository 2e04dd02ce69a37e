// Deals of the CRM, a versioned resource (versionedResources.ts). Its owner, company and contacts
// must be of its workspace; a change records deal.updated, and deal.stage_changed after it when the
// stage moves; a deal that a contract names cannot be deleted.
import type { components } from '../../generated/work-platform/types.js';
import { sortFields } from '../../generated/work-platform/rules.js';
import { and, eq, gte, sql } from 'drizzle-orm';
import { companies, contacts, contracts, dealContacts, dealStages, deals, storageLimits, users, type DealStage } from '../../db/schema.js';
import { placeholdersFor, workspaceRowStatement } from './drizzle.js';
import { engineOf, type StoreSource } from './engine.js';
import type { FilteredListOptions } from './filteredLists.js';
import { defaultRandomBytes, newId } from './ids.js';
import type { SortKeyDefinition } from './keysetPages.js';
import { referenceCounter, versionedResource, type VersionedResourceOptions, type VersionedStore } from './versionedResources.js';
import { InUseError, InvalidValueError, NotFoundError } from './workPlatformErrors.js';
import { checkText, formatTimestamp, utcDayStart, type ConstraintFields } from './workPlatformValues.js';

export { dealStages, type DealStage };

export type Deal = components['schemas']['Deal'];
export type CreateDealInput = components['schemas']['DealCreate'];
export type UpdateDealInput = components['schemas']['DealUpdate'];

/** The fields the list sorts by: the contract's `DealSort` parameter. */
export const dealSorts = sortFields.DealSort;
export type DealSort = (typeof dealSorts)[number];
export type DealListOptions = FilteredListOptions<DealSort, 'stage' | 'ownerId' | 'companyId' | 'updatedSince'>;

export type DealStoreOptions = VersionedResourceOptions;

/**
 * An update's `contactIds` replaces the list; it records deal.updated, and deal.stage_changed when the stage changes.
 * Deleting a deal that a contract names is an InUseError (`deal-has-contracts`); its company and contacts stay.
 */
export type DealStore = VersionedStore<'Deal', 'Deals', Deal, CreateDealInput, UpdateDealInput, DealListOptions>;

type DealRow = typeof deals.$inferSelect;

export function toDeal(row: Omit<DealRow, 'workspaceId'>): Deal {
  const createdAt = formatTimestamp(row.createdAt);
  return {
    id: row.id,
    title: row.title,
    stage: row.stage,
    amountMinor: row.amountMinor,
    currency: row.currency,
    ownerId: row.ownerId,
    companyId: row.companyId,
    contactIds: JSON.parse(row.contactIds) as string[],
    expectedCloseOn: row.expectedCloseOn,
    version: row.version,
    createdAt,
    updatedAt: row.updatedAt === row.createdAt ? createdAt : formatTimestamp(row.updatedAt),
  };
}

const sortKeys: Record<DealSort, SortKeyDefinition> = {
  createdAt: { expression: deals.createdAt, keyType: 'number' },
  updatedAt: { expression: deals.updatedAt, keyType: 'number' },
  title: { expression: deals.title, keyType: 'string' },
  amountMinor: { expression: deals.amountMinor, keyType: 'number' },
};

/** The length CHECKs of the table, by constraint name (the same names on both engines). */
export const dealConstraintFields: ConstraintFields = {
  deals_title_length: { field: 'title', limit: storageLimits.dealTitle },
};

function checkDay(value: string): void {
  if (utcDayStart(value) === undefined) throw new InvalidValueError('expectedCloseOn', 'must be a calendar day, YYYY-MM-DD.');
}

function checkDealValues(input: UpdateDealInput): void {
  if (input.title !== undefined) checkText('title', input.title, storageLimits.dealTitle, { allowEmpty: false });
  if (input.stage !== undefined && !(dealStages as readonly unknown[]).includes(input.stage)) {
    throw new InvalidValueError('stage', `must be one of ${dealStages.join(', ')}.`);
  }
  if (input.amountMinor !== undefined && (!Number.isSafeInteger(input.amountMinor) || input.amountMinor < 0)) {
    throw new InvalidValueError('amountMinor', 'must be a whole number from 0 to 2^53 - 1.');
  }
  if (input.currency !== undefined && !/^[A-Z]{3}$/.test(input.currency)) throw new InvalidValueError('currency', 'must be three capital letters.');
  if (input.contactIds !== undefined && (!Array.isArray(input.contactIds) || new Set(input.contactIds).size !== input.contactIds.length)) {
    throw new InvalidValueError('contactIds', 'must be a list of distinct contact ids.');
  }
  if (input.expectedCloseOn !== undefined && input.expectedCloseOn !== null) checkDay(input.expectedCloseOn);
}

export function createDealStore(source: StoreSource, options: DealStoreOptions = {}): DealStore {
  const engine = engineOf(source);
  const { orm } = engine;
  const resource = versionedResource(
    engine,
    {
      table: deals,
      entity: 'deal',
      constraintFields: dealConstraintFields,
      toItem: toDeal,
      sortKeys,
      filters: {
        stage: eq(deals.stage, sql.placeholder('stage')),
        ownerId: eq(deals.ownerId, sql.placeholder('ownerId')),
        companyId: eq(deals.companyId, sql.placeholder('companyId')),
        updatedSince: gte(deals.updatedAt, sql.placeholder('updatedSince')),
      },
    },
    options,
  );
  const userExists = workspaceRowStatement(engine, users);
  const companyExists = workspaceRowStatement(engine, companies);
  const contactExists = workspaceRowStatement(engine, contacts);
  const countContracts = referenceCounter(engine, contracts, contracts.dealId);
  const insertContact = engine.statement(orm.insert(dealContacts).values(placeholdersFor(dealContacts)));
  const removeContacts = engine.statement(
    orm
      .delete(dealContacts)
      .where(and(eq(dealContacts.workspaceId, sql.placeholder('workspaceId')), eq(dealContacts.dealId, sql.placeholder('dealId')))),
  );

  async function checkReferences(row: DealRow, previous?: DealRow): Promise<void> {
    const { workspaceId } = row;
    if (row.ownerId !== previous?.ownerId && !(await userExists.row({ workspaceId, id: row.ownerId }))) throw new NotFoundError('user', row.ownerId);
    if (row.companyId !== null && row.companyId !== previous?.companyId && !(await companyExists.row({ workspaceId, id: row.companyId }))) {
      throw new NotFoundError('company', row.companyId);
    }
    if (row.contactIds === previous?.contactIds) return;
    for (const contactId of JSON.parse(row.contactIds) as string[]) {
      if (!(await contactExists.row({ workspaceId, id: contactId }))) throw new NotFoundError('contact', contactId);
    }
  }

  async function linkContacts(row: DealRow): Promise<void> {
    const { workspaceId } = row;
    await removeContacts.run({ workspaceId, dealId: row.id });
    for (const contactId of JSON.parse(row.contactIds) as string[]) await insertContact.run({ workspaceId, dealId: row.id, contactId });
  }

  return {
    async createDeal(workspaceId, input, actor) {
      for (const name of ['title', 'amountMinor', 'currency', 'ownerId'] as const) {
        if (input[name] === undefined) throw new InvalidValueError(name, 'is required.');
      }
      checkDealValues(input);
      const at = resource.now();
      const row: DealRow = {
        id: newId('del', options.randomBytes ?? defaultRandomBytes),
        workspaceId,
        title: input.title,
        stage: input.stage ?? 'lead',
        amountMinor: input.amountMinor,
        currency: input.currency,
        ownerId: input.ownerId,
        companyId: input.companyId ?? null,
        contactIds: JSON.stringify(input.contactIds ?? []),
        expectedCloseOn: input.expectedCloseOn ?? null,
        version: 1,
        createdAt: at,
        updatedAt: at,
      };
      return resource.create(row, actor, { check: () => checkReferences(row), settle: () => linkContacts(row) });
    },

    getDeal: resource.get,

    async updateDeal(workspaceId, id, patch, expectedVersion, actor) {
      checkDealValues(patch);
      return resource.update(workspaceId, id, expectedVersion, actor, {
        apply: (current) => ({
          ...current,
          title: patch.title ?? current.title,
          stage: patch.stage ?? current.stage,
          amountMinor: patch.amountMinor ?? current.amountMinor,
          currency: patch.currency ?? current.currency,
          ownerId: patch.ownerId ?? current.ownerId,
          companyId: patch.companyId === undefined ? current.companyId : patch.companyId,
          contactIds: patch.contactIds === undefined ? current.contactIds : JSON.stringify(patch.contactIds),
          expectedCloseOn: patch.expectedCloseOn === undefined ? current.expectedCloseOn : patch.expectedCloseOn,
        }),
        fields: ['title', 'stage', 'amountMinor', 'currency', 'ownerId', 'companyId', 'contactIds', 'expectedCloseOn'],
        check: checkReferences,
        settle: async (next, current) => {
          if (next.contactIds !== current.contactIds) await linkContacts(next);
        },
        moreEvents: (next, current) => (next.stage !== current.stage ? ['deal.stage_changed'] : []),
      });
    },

    async deleteDeal(workspaceId, id, expectedVersion, actor) {
      // deal_contacts rows go with the deal (foreign key cascade).
      return resource.delete(workspaceId, id, expectedVersion, actor, {
        async check() {
          const contractCount = await countContracts(workspaceId, id);
          if (contractCount > 0) throw new InUseError('deal-has-contracts', id, contractCount);
        },
      });
    },

    listDeals: resource.list,
  };
}

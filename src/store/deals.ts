// Deals of the CRM. Every read and write is scoped by workspace (another workspace's deal, user,
// company or contact is "not found"), every change bumps `version` by one and records its outbox
// events in the same transaction: deal.updated, and deal.stage_changed after it when the stage moves.
import type { components } from '../../generated/work-platform/types.js';
import { sortFields } from '../../generated/work-platform/rules.js';
import { and, count, eq, gte, sql } from 'drizzle-orm';
import { companies, contacts, contracts, dealContacts, dealStages, deals, storageLimits, users, type DealStage } from '../../db/schema.js';
import { engineFilteredKeysetList, type FilteredListOptions } from './filteredLists.js';
import { placeholdersFor, workspaceRowStatement } from './drizzle.js';
import { engineOf, type StoreSource } from './engine.js';
import { defaultRandomBytes, newId, type RandomBytes } from './ids.js';
import type { KeysetPage, SortKeyDefinition } from './keysetPages.js';
import { createOutboxRecorder, type EventActor } from './outboxEvents.js';
import { InUseError, InvalidValueError, NotFoundError } from './workPlatformErrors.js';
import { changeWriter, checkText, formatTimestamp, utcDayStart, versionedRow, type ConstraintFields } from './workPlatformValues.js';

export { dealStages, type DealStage };

export type Deal = components['schemas']['Deal'];
export type CreateDealInput = components['schemas']['DealCreate'];
export type UpdateDealInput = components['schemas']['DealUpdate'];

/** The fields the list sorts by: the contract's `DealSort` parameter. */
export const dealSorts = sortFields.DealSort;
export type DealSort = (typeof dealSorts)[number];
export type DealListOptions = FilteredListOptions<DealSort, 'stage' | 'ownerId' | 'companyId' | 'updatedSince'>;

export interface DealStoreOptions {
  now?: () => number;
  randomBytes?: RandomBytes;
}

export interface DealStore {
  createDeal(workspaceId: string, input: CreateDealInput, actor: EventActor): Promise<Deal>;
  /** Undefined when missing or in another workspace. */
  getDeal(workspaceId: string, id: string): Promise<Deal | undefined>;
  /**
   * Applies the given members when `expectedVersion` is current (`contactIds` replaces the list).
   * Records deal.updated, and deal.stage_changed when the stage changes. A patch that changes nothing writes nothing.
   */
  updateDeal(workspaceId: string, id: string, patch: UpdateDealInput, expectedVersion: number, actor: EventActor): Promise<Deal>;
  /** Deletes a deal that no contract names (else InUseError `deal-has-contracts`); its company and contacts stay. Returns the deal as it was. */
  deleteDeal(workspaceId: string, id: string, expectedVersion: number | null, actor: EventActor): Promise<Deal>;
  /** `updatedSince` in milliseconds since the epoch. */
  listDeals(workspaceId: string, options: DealListOptions): Promise<KeysetPage<Deal>>;
}

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

type ListedDealRow = [
  id: string,
  sortKey: string | number,
  title: string,
  stage: DealStage,
  amountMinor: number,
  currency: string,
  ownerId: string,
  companyId: string | null,
  contactIds: string,
  expectedCloseOn: string | null,
  version: number,
  createdAt: number,
  updatedAt: number,
];

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
  const now = options.now ?? Date.now;
  const randomBytes = options.randomBytes ?? defaultRandomBytes;
  const engine = engineOf(source);
  const { orm } = engine;
  const outbox = createOutboxRecorder(engine, randomBytes);

  const inWorkspace = and(eq(deals.workspaceId, sql.placeholder('workspaceId')), eq(deals.id, sql.placeholder('id')));
  const selectOne = engine.statement<DealRow>(orm.select().from(deals).where(inWorkspace));
  const userExists = workspaceRowStatement(engine, users);
  const companyExists = workspaceRowStatement(engine, companies);
  const contactExists = workspaceRowStatement(engine, contacts);
  const insert = engine.statement(orm.insert(deals).values(placeholdersFor(deals)));
  const update = engine.statement(
    orm
      .update(deals)
      .set({
        title: sql`${sql.placeholder('title')}`,
        stage: sql`${sql.placeholder('stage')}`,
        amountMinor: sql`${sql.placeholder('amountMinor')}`,
        currency: sql`${sql.placeholder('currency')}`,
        ownerId: sql`${sql.placeholder('ownerId')}`,
        companyId: sql`${sql.placeholder('companyId')}`,
        contactIds: sql`${sql.placeholder('contactIds')}`,
        expectedCloseOn: sql`${sql.placeholder('expectedCloseOn')}`,
        version: sql`${sql.placeholder('version')}`,
        updatedAt: sql`${sql.placeholder('updatedAt')}`,
      })
      .where(inWorkspace),
  );
  const remove = engine.statement(orm.delete(deals).where(inWorkspace));
  const countContracts = engine.statement<{ count: number }>(
    orm
      .select({ count: count() })
      .from(contracts)
      .where(and(eq(contracts.workspaceId, sql.placeholder('workspaceId')), eq(contracts.dealId, sql.placeholder('id')))),
  );
  const insertContact = engine.statement(orm.insert(dealContacts).values(placeholdersFor(dealContacts)));
  const removeContacts = engine.statement(
    orm
      .delete(dealContacts)
      .where(and(eq(dealContacts.workspaceId, sql.placeholder('workspaceId')), eq(dealContacts.dealId, sql.placeholder('dealId')))),
  );

  const list = engineFilteredKeysetList(engine, {
    table: deals,
    idColumn: deals.id,
    workspaceColumn: deals.workspaceId,
    columns: {
      title: deals.title,
      stage: deals.stage,
      amountMinor: deals.amountMinor,
      currency: deals.currency,
      ownerId: deals.ownerId,
      companyId: deals.companyId,
      contactIds: deals.contactIds,
      expectedCloseOn: deals.expectedCloseOn,
      version: deals.version,
      createdAt: deals.createdAt,
      updatedAt: deals.updatedAt,
    },
    sortKeys,
    filters: {
      stage: eq(deals.stage, sql.placeholder('stage')),
      ownerId: eq(deals.ownerId, sql.placeholder('ownerId')),
      companyId: eq(deals.companyId, sql.placeholder('companyId')),
      updatedSince: gte(deals.updatedAt, sql.placeholder('updatedSince')),
    },
    toItem: ([id, , title, stage, amountMinor, currency, ownerId, companyId, contactIds, expectedCloseOn, version, createdAt, updatedAt]: ListedDealRow) =>
      toDeal({ id, title, stage, amountMinor, currency, ownerId, companyId, contactIds, expectedCloseOn, version, createdAt, updatedAt }),
  });

  const write = changeWriter(engine, dealConstraintFields);
  const currentRow = async (workspaceId: string, id: string, expectedVersion: number | null): Promise<DealRow> =>
    versionedRow('deal', id, await selectOne.object({ workspaceId, id }), expectedVersion);

  async function checkReferences(workspaceId: string, row: DealRow, previous?: DealRow): Promise<void> {
    if (row.ownerId !== previous?.ownerId && !(await userExists.row({ workspaceId, id: row.ownerId }))) throw new NotFoundError('user', row.ownerId);
    if (row.companyId !== null && row.companyId !== previous?.companyId && !(await companyExists.row({ workspaceId, id: row.companyId }))) {
      throw new NotFoundError('company', row.companyId);
    }
    if (row.contactIds === previous?.contactIds) return;
    for (const contactId of JSON.parse(row.contactIds) as string[]) {
      if (!(await contactExists.row({ workspaceId, id: contactId }))) throw new NotFoundError('contact', contactId);
    }
  }

  async function linkContacts(workspaceId: string, row: DealRow): Promise<void> {
    await removeContacts.run({ workspaceId, dealId: row.id });
    for (const contactId of JSON.parse(row.contactIds) as string[]) await insertContact.run({ workspaceId, dealId: row.id, contactId });
  }

  return {
    async createDeal(workspaceId, input, actor) {
      for (const name of ['title', 'amountMinor', 'currency', 'ownerId'] as const) {
        if (input[name] === undefined) throw new InvalidValueError(name, 'is required.');
      }
      checkDealValues(input);
      const at = now();
      const row: DealRow = {
        id: newId('del', randomBytes),
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
      return write(async () => {
        await checkReferences(workspaceId, row);
        await insert.run(row);
        await linkContacts(workspaceId, row);
        const deal = toDeal(row);
        await outbox.record(workspaceId, 'deal.created', actor, at, deal);
        return deal;
      });
    },

    async getDeal(workspaceId, id) {
      const row = await engine.read(() => selectOne.object({ workspaceId, id }));
      return row ? toDeal(row) : undefined;
    },

    async updateDeal(workspaceId, id, patch, expectedVersion, actor) {
      checkDealValues(patch);
      return write(async () => {
        const current = await currentRow(workspaceId, id, expectedVersion);
        const next: DealRow = {
          ...current,
          title: patch.title ?? current.title,
          stage: patch.stage ?? current.stage,
          amountMinor: patch.amountMinor ?? current.amountMinor,
          currency: patch.currency ?? current.currency,
          ownerId: patch.ownerId ?? current.ownerId,
          companyId: patch.companyId === undefined ? current.companyId : patch.companyId,
          contactIds: patch.contactIds === undefined ? current.contactIds : JSON.stringify(patch.contactIds),
          expectedCloseOn: patch.expectedCloseOn === undefined ? current.expectedCloseOn : patch.expectedCloseOn,
        };
        const fields = ['title', 'stage', 'amountMinor', 'currency', 'ownerId', 'companyId', 'contactIds', 'expectedCloseOn'] as const;
        if (!fields.some((name) => next[name] !== current[name])) return toDeal(current);
        await checkReferences(workspaceId, next, current);
        next.version = current.version + 1;
        next.updatedAt = now();
        await update.run(next);
        if (next.contactIds !== current.contactIds) await linkContacts(workspaceId, next);
        const deal = toDeal(next);
        await outbox.record(workspaceId, 'deal.updated', actor, next.updatedAt, deal);
        if (next.stage !== current.stage) await outbox.record(workspaceId, 'deal.stage_changed', actor, next.updatedAt, deal);
        return deal;
      });
    },

    async deleteDeal(workspaceId, id, expectedVersion, actor) {
      return write(async () => {
        const current = await currentRow(workspaceId, id, expectedVersion);
        const contractCount = (await countContracts.object({ workspaceId, id }))?.count ?? 0;
        if (contractCount > 0) throw new InUseError('deal-has-contracts', id, contractCount);
        // deal_contacts rows go with the deal (foreign key cascade).
        await remove.run({ workspaceId, id });
        const deal = toDeal(current);
        await outbox.record(workspaceId, 'deal.deleted', actor, now(), deal);
        return deal;
      });
    },

    listDeals: list,
  };
}

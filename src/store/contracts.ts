// Contracts. Every read and write is scoped by workspace; every change bumps `version` by one and
// records its outbox event in the same transaction.
//
// Expiry by date: a sent contract expires at `expires_at` (00:00 UTC of the day after `expires_on`).
// Reads show it as of the instant they run (`asOf`): a sent row past its instant reads as expired,
// with `expiredAt` and `updatedAt` at that instant and `version` one higher — exactly the row that
// recording the expiry writes. The expiry is recorded (with contract.expired) by the sweep
// `expireOverdueContracts`, or by any write that finds the row overdue before it acts, so what
// readers saw never changes when it is recorded.
import type { components } from '../../generated/work-platform/types.js';
import { sortFields } from '../../generated/work-platform/rules.js';
import { and, asc, eq, gt, lte, sql } from 'drizzle-orm';
import { companies, contracts, contractStorageLimits, deals, type ContractStatus } from '../../db/schema.js';
import { workspaceRowStatement } from './drizzle.js';
import { engineOf, type DialectSql, type StoreSource } from './engine.js';
import type { FilteredListOptions } from './filteredLists.js';
import { defaultRandomBytes, newId } from './ids.js';
import type { KeysetRow, SortKeyDefinition } from './keysetPages.js';
import type { EventActor, OutboxEventType } from './outboxEvents.js';
import { versionedResource, type VersionedResourceOptions, type VersionedStore } from './versionedResources.js';
import { ContractStateError, InvalidValueError, NotFoundError, ValueRefusedError, type RefusedValue } from './workPlatformErrors.js';
import { checkText, formatTimestamp, utcDayStart, versionedRow, type ConstraintFields } from './workPlatformValues.js';

export type Contract = components['schemas']['Contract'];
export type CreateContractInput = components['schemas']['ContractCreate'];
export type UpdateContractInput = components['schemas']['ContractUpdate'];

/** The explicit moves of the lifecycle; expiry is the one move made by date. */
export type ContractMove = 'send' | 'sign' | 'decline' | 'withdraw';

/** The fields the list sorts by: the contract's `ContractSort` parameter. */
export const contractSorts = sortFields.ContractSort;
export type ContractSort = (typeof contractSorts)[number];
export type ContractListOptions = FilteredListOptions<ContractSort, 'status' | 'companyId' | 'dealId' | 'updatedSince'>;

/** Who records an expiry: no user, the server's sweep. */
export const contractExpiryActor: EventActor = { id: 'contract-expiry', kind: 'SYSTEM' };

/** Rows the sweep records per transaction, so that it never holds the write lock long. */
const expiryBatchSize = 500;
const msPerDay = 86_400_000;

export type ContractStoreOptions = VersionedResourceOptions;

/**
 * Reads show contracts as of now (a list until the next expiry of a sent contract, `shownUntil`). Only a draft
 * can be updated; only a draft, declined or expired contract can be deleted.
 */
export type ContractStore = VersionedStore<'Contract', 'Contracts', Contract, CreateContractInput, UpdateContractInput, ContractListOptions> & {
  /** One move of the lifecycle; a move the status does not allow is a ContractStateError. */
  moveContract(workspaceId: string, id: string, move: ContractMove, expectedVersion: number | null, actor: EventActor): Promise<Contract>;
  /** Records the expiry of every sent contract past its date (contract.expired each); returns how many. */
  expireOverdueContracts(): Promise<number>;
};

type ContractRow = typeof contracts.$inferSelect;

function timestampOrNull(ms: number | null): string | null {
  return ms === null ? null : formatTimestamp(ms);
}

export function toContract(row: Omit<ContractRow, 'workspaceId' | 'expiresAt'>): Contract {
  return {
    id: row.id,
    title: row.title,
    status: row.status,
    companyId: row.companyId,
    dealId: row.dealId,
    amountMinor: row.amountMinor,
    currency: row.currency,
    body: row.body,
    expiresOn: row.expiresOn,
    sentAt: timestampOrNull(row.sentAt),
    signedAt: timestampOrNull(row.signedAt),
    declinedAt: timestampOrNull(row.declinedAt),
    expiredAt: timestampOrNull(row.expiredAt),
    version: row.version,
    createdAt: formatTimestamp(row.createdAt),
    updatedAt: formatTimestamp(row.updatedAt),
  };
}

/** The instant a contract expiring after `expiresOn` expires: 00:00 UTC of the next day. */
export function expiryInstantOf(expiresOn: string): number {
  const start = utcDayStart(expiresOn);
  if (start === undefined) throw new InvalidValueError('expiresOn', 'must be a calendar day, YYYY-MM-DD.');
  return start + msPerDay;
}

/** The row as recording its expiry leaves it (the same as the reads' view of an overdue row). */
function expiredRow(row: ContractRow): ContractRow {
  const instant = Math.max(row.updatedAt, row.expiresAt);
  return { ...row, status: 'expired', expiredAt: instant, updatedAt: instant, version: row.version + 1 };
}

/** The reads' view as of `asOf`, in SQL: the same rule as expiredRow. */
function contractViewOf(dialect: DialectSql) {
  const asOf = sql.placeholder('asOf');
  const overdue = sql`(${contracts.status} = 'sent' AND ${contracts.expiresAt} <= ${asOf})`;
  const expiryInstant = dialect.greatest(contracts.updatedAt, contracts.expiresAt);
  const statusAsOf = sql<ContractStatus>`CASE WHEN ${overdue} THEN 'expired' ELSE ${contracts.status} END`;
  const updatedAtAsOf = sql<number>`CASE WHEN ${overdue} THEN ${expiryInstant} ELSE ${contracts.updatedAt} END`;
  const columns = {
    title: contracts.title,
    status: statusAsOf,
    companyId: contracts.companyId,
    dealId: contracts.dealId,
    amountMinor: contracts.amountMinor,
    currency: contracts.currency,
    body: contracts.body,
    expiresOn: contracts.expiresOn,
    sentAt: contracts.sentAt,
    signedAt: contracts.signedAt,
    declinedAt: contracts.declinedAt,
    expiredAt: sql<number | null>`CASE WHEN ${overdue} THEN ${expiryInstant} ELSE ${contracts.expiredAt} END`,
    version: sql<number>`${contracts.version} + CASE WHEN ${overdue} THEN 1 ELSE 0 END`,
    createdAt: contracts.createdAt,
    updatedAt: updatedAtAsOf,
  };
  const sortKeys: Record<ContractSort, SortKeyDefinition> = {
    createdAt: { expression: contracts.createdAt, keyType: 'number' },
    updatedAt: { expression: updatedAtAsOf, keyType: 'number' },
    title: { expression: contracts.title, keyType: 'string' },
    expiresOn: { expression: contracts.expiresOn, keyType: 'string' },
  };
  return { statusAsOf, updatedAtAsOf, columns, sortKeys };
}

/** The length CHECKs of the table, by constraint name (the same names on both engines). */
export const contractConstraintFields: ConstraintFields = {
  contracts_title_length: { field: 'title', limit: contractStorageLimits.title },
  contracts_body_length: { field: 'body', limit: contractStorageLimits.body },
};

function checkContractValues(input: UpdateContractInput): void {
  if (input.title !== undefined) checkText('title', input.title, contractStorageLimits.title, { allowEmpty: false });
  if (input.body !== undefined && input.body !== null) checkText('body', input.body, contractStorageLimits.body, { allowEmpty: true });
  if (input.amountMinor !== undefined && input.amountMinor !== null && (!Number.isSafeInteger(input.amountMinor) || input.amountMinor < 0)) {
    throw new InvalidValueError('amountMinor', 'must be a whole number from 0 to 2^53 - 1.');
  }
  if (input.currency !== undefined && input.currency !== null && !/^[A-Z]{3}$/.test(input.currency)) {
    throw new InvalidValueError('currency', 'must be three capital letters.');
  }
  if (input.expiresOn !== undefined) expiryInstantOf(input.expiresOn);
}

/** Why a status refuses a move that needs a sent contract (sign, decline, withdraw), or a send. */
function refusalOf(status: ContractStatus, move: ContractMove): ContractStateError | undefined {
  const refusals: Record<ContractStatus, [code: ContractStateError['code'], reason: string] | undefined> = {
    draft: move === 'send' ? undefined : ['contract-not-sent', 'is a draft; send it first'],
    sent: move === 'send' ? ['contract-already-sent', 'has already been sent'] : undefined,
    signed: ['contract-already-signed', 'has already been signed'],
    declined: ['contract-already-declined', 'has already been declined'],
    expired: ['contract-expired', 'has expired'],
  };
  const refusal = refusals[status];
  return refusal ? new ContractStateError(refusal[0], `The contract ${refusal[1]}; it cannot be ${movedWord[move]}.`) : undefined;
}

const movedWord: Record<ContractMove, string> = { send: 'sent', sign: 'signed', decline: 'declined', withdraw: 'withdrawn' };
const moveEvents: Record<ContractMove, OutboxEventType> = {
  send: 'contract.sent',
  sign: 'contract.signed',
  decline: 'contract.declined',
  withdraw: 'contract.withdrawn',
};

export function createContractStore(source: StoreSource, options: ContractStoreOptions = {}): ContractStore {
  const engine = engineOf(source);
  const { orm } = engine;
  const view = contractViewOf(engine.dialect);
  const resource = versionedResource(
    engine,
    {
      table: contracts,
      entity: 'contract',
      constraintFields: contractConstraintFields,
      toItem: toContract,
      // What is shown depends on the instant, but in SQL: reads bind it as `asOf`.
      listedColumns: view.columns,
      sortKeys: view.sortKeys,
      filters: {
        status: sql`${view.statusAsOf} = ${sql.placeholder('status')}`,
        companyId: eq(contracts.companyId, sql.placeholder('companyId')),
        dealId: eq(contracts.dealId, sql.placeholder('dealId')),
        updatedSince: sql`${view.updatedAtAsOf} >= ${sql.placeholder('updatedSince')}`,
      },
    },
    options,
  );
  const { now, outbox, write } = resource;

  const inWorkspace = and(eq(contracts.workspaceId, sql.placeholder('workspaceId')), eq(contracts.id, sql.placeholder('id')));
  // Read as a list row is (id, sort key, columns), so that one mapping serves both.
  const viewOne = engine.statement<unknown, { workspaceId: string; id: string; asOf: number }, KeysetRow>(
    orm
      .select({ id: contracts.id, sortKey: contracts.createdAt, ...view.columns })
      .from(contracts)
      .where(inWorkspace),
  );
  const companyExists = workspaceRowStatement(engine, companies);
  const companyOfDeal = engine.statement<{ companyId: string | null }>(
    orm
      .select({ companyId: deals.companyId })
      .from(deals)
      .where(and(eq(deals.workspaceId, sql.placeholder('workspaceId')), eq(deals.id, sql.placeholder('id')))),
  );
  // The first instant after `asOf` at which a sent contract of the workspace expires: until then a list reads the same.
  const nextExpiry = engine.statement<unknown, { workspaceId: string; asOf: number }>(
    orm
      .select({ expiresAt: sql<number | null>`min(${contracts.expiresAt})` })
      .from(contracts)
      .where(and(eq(contracts.workspaceId, sql.placeholder('workspaceId')), eq(contracts.status, 'sent'), gt(contracts.expiresAt, sql.placeholder('asOf')))),
  );
  const overdueRows = engine.statement<ContractRow>(
    orm
      .select()
      .from(contracts)
      .where(and(eq(contracts.status, 'sent'), lte(contracts.expiresAt, sql.placeholder('asOf'))))
      .orderBy(asc(contracts.expiresAt), asc(contracts.id))
      .limit(sql.placeholder('limit')),
  );

  /** Records the expiry of an overdue sent row (contract.expired); any other row as it is. */
  async function caughtUp(workspaceId: string, row: ContractRow, at: number): Promise<ContractRow> {
    if (row.status !== 'sent' || row.expiresAt > at) return row;
    const next = expiredRow(row);
    await resource.rewrite(next);
    await outbox.record(workspaceId, 'contract.expired', contractExpiryActor, at, toContract(next));
    return next;
  }

  /** The row a change applies to, its expiry recorded first, at the version expected (when one is). */
  async function currentRow(workspaceId: string, id: string, expectedVersion: number | null, at: number): Promise<ContractRow> {
    const row = await resource.current(workspaceId, id, null);
    return versionedRow('contract', id, await caughtUp(workspaceId, row, at), expectedVersion);
  }

  /**
   * The company and deal of a contract that names `next.dealId`/`next.companyId`: both must be of
   * the workspace, at least one given; a deal's company fills a company not given, and a company
   * given must be the deal's when the deal has one.
   */
  async function resolveParties(workspaceId: string, next: ContractRow, companyGiven: boolean): Promise<void> {
    if (next.companyId === null && next.dealId === null) {
      throw new ValueRefusedError([{ path: '/companyId', code: 'invalid_format', message: 'or dealId is required: a contract names a company, a deal or both' }]);
    }
    if (next.dealId !== null) {
      const deal = await companyOfDeal.object({ workspaceId, id: next.dealId });
      if (!deal) throw new NotFoundError('deal', next.dealId);
      if (deal.companyId !== null && next.companyId !== deal.companyId) {
        if (companyGiven) {
          throw new ValueRefusedError([
            { path: '/companyId', code: 'invalid_format', message: `must be ${deal.companyId}, the company of deal ${next.dealId}, or be left out` },
          ]);
        }
        next.companyId = deal.companyId;
      }
    }
    if (next.companyId !== null && !(await companyExists.row({ workspaceId, id: next.companyId }))) throw new NotFoundError('company', next.companyId);
  }

  function checkValue(row: ContractRow): void {
    const refused: RefusedValue[] = [];
    if (row.amountMinor !== null && row.currency === null) refused.push({ path: '/currency', code: 'invalid_format', message: 'is required with amountMinor' });
    if (row.amountMinor === null && row.currency !== null) refused.push({ path: '/amountMinor', code: 'invalid_format', message: 'is required with currency' });
    if (refused.length > 0) throw new ValueRefusedError(refused);
  }

  async function recordExpiries(): Promise<number> {
    return write(async () => {
      const at = now();
      const rows = await overdueRows.objects({ asOf: at, limit: expiryBatchSize });
      for (const row of rows) await caughtUp(row.workspaceId, row, at);
      return rows.length;
    });
  }

  return {
    async createContract(workspaceId, input, actor) {
      for (const name of ['title', 'expiresOn'] as const) {
        if (input[name] === undefined) throw new InvalidValueError(name, 'is required.');
      }
      checkContractValues(input);
      const at = now();
      const row: ContractRow = {
        id: newId('ctr', options.randomBytes ?? defaultRandomBytes),
        workspaceId,
        title: input.title,
        status: 'draft',
        companyId: input.companyId ?? null,
        dealId: input.dealId ?? null,
        amountMinor: input.amountMinor ?? null,
        currency: input.currency ?? null,
        body: input.body ?? null,
        expiresOn: input.expiresOn,
        expiresAt: expiryInstantOf(input.expiresOn),
        sentAt: null,
        signedAt: null,
        declinedAt: null,
        expiredAt: null,
        version: 1,
        createdAt: at,
        updatedAt: at,
      };
      checkValue(row);
      return resource.create(row, actor, { check: () => resolveParties(workspaceId, row, input.companyId !== undefined && input.companyId !== null) });
    },

    async getContract(workspaceId, id) {
      const row = await engine.read(() => viewOne.row({ workspaceId, id, asOf: now() }));
      return row ? resource.fromListedRow(row, 0) : undefined;
    },

    async updateContract(workspaceId, id, patch, expectedVersion, actor) {
      checkContractValues(patch);
      return write(async () => {
        const at = now();
        const current = await currentRow(workspaceId, id, expectedVersion, at);
        if (current.status !== 'draft') {
          throw new ContractStateError('contract-not-editable', `The contract is ${current.status}; only drafts can be changed${current.status === 'sent' ? ' (withdraw it first)' : ''}.`);
        }
        const next: ContractRow = {
          ...current,
          title: patch.title ?? current.title,
          companyId: patch.companyId === undefined ? current.companyId : patch.companyId,
          dealId: patch.dealId === undefined ? current.dealId : patch.dealId,
          amountMinor: patch.amountMinor === undefined ? current.amountMinor : patch.amountMinor,
          currency: patch.currency === undefined ? current.currency : patch.currency,
          body: patch.body === undefined ? current.body : patch.body,
          expiresOn: patch.expiresOn ?? current.expiresOn,
        };
        next.expiresAt = expiryInstantOf(next.expiresOn);
        checkValue(next);
        if (next.companyId !== current.companyId || next.dealId !== current.dealId) {
          await resolveParties(workspaceId, next, patch.companyId !== undefined && patch.companyId !== null);
        }
        const fields = ['title', 'companyId', 'dealId', 'amountMinor', 'currency', 'body', 'expiresOn'] as const;
        if (!fields.some((name) => next[name] !== current[name])) return toContract(current);
        return resource.save(current, next, actor, ['contract.updated'], at);
      });
    },

    async moveContract(workspaceId, id, move, expectedVersion, actor) {
      return write(async () => {
        const at = now();
        const current = await currentRow(workspaceId, id, expectedVersion, at);
        const refusal = refusalOf(current.status, move);
        if (refusal) throw refusal;
        if (move === 'send' && current.expiresAt <= at) {
          throw new ContractStateError(
            'contract-expiry-passed',
            `The contract's expiresOn (${current.expiresOn}) is before today (UTC); change it before sending.`,
          );
        }
        const next: ContractRow = { ...current };
        if (move === 'send') Object.assign(next, { status: 'sent', sentAt: at });
        if (move === 'sign') Object.assign(next, { status: 'signed', signedAt: at });
        if (move === 'decline') Object.assign(next, { status: 'declined', declinedAt: at });
        if (move === 'withdraw') Object.assign(next, { status: 'draft', sentAt: null });
        return resource.save(current, next, actor, [moveEvents[move]], at);
      });
    },

    async deleteContract(workspaceId, id, expectedVersion, actor) {
      return write(async () => {
        const at = now();
        const current = await currentRow(workspaceId, id, expectedVersion, at);
        if (current.status === 'sent' || current.status === 'signed') {
          throw new ContractStateError(
            'contract-not-deletable',
            current.status === 'sent'
              ? 'The contract has been sent; withdraw it before deleting it.'
              : 'The contract has been signed; a signed contract is kept as the record of the agreement.',
          );
        }
        return resource.remove(current, actor, at);
      });
    },

    async listContracts(workspaceId, listOptions) {
      const asOf = now();
      const page = await resource.list(workspaceId, { ...listOptions, bindings: { asOf } });
      const expiresAt = (await engine.read(() => nextExpiry.value({ workspaceId, asOf }))) as number | null | undefined;
      return expiresAt === null || expiresAt === undefined ? page : { ...page, shownUntil: expiresAt };
    },

    async expireOverdueContracts() {
      let recorded = 0;
      for (;;) {
        const batch = await recordExpiries();
        recorded += batch;
        if (batch < expiryBatchSize) return recorded;
      }
    },
  };
}

// Connectors of the Work-Platform API: a workspace's connections to outside services. Every read
// and write is scoped by workspace, every change bumps `version` and records its outbox event in
// the same transaction. The credential arrives here already sealed (the store never sees it in
// clear) and is kept only while it may be used. `expired` is stored when an operation finds it
// out (the service refused the credential, or its expiry had passed); a `connected` row whose
// expiry has passed is shown as `expired` at once.
import type { components } from '../../generated/work-platform/types.js';
import { maxLengths, sortFields } from '../../generated/work-platform/rules.js';
import { and, eq, gte, sql } from 'drizzle-orm';
import { connectorKinds, connectors, type ConnectorKind, type ConnectorStatus } from '../../db/schema.js';
import { engineFilteredKeysetList, type FilteredListOptions } from './filteredLists.js';
import { placeholdersFor } from './drizzle.js';
import { engineOf, type StoreSource } from './engine.js';
import { defaultRandomBytes, newId, type RandomBytes } from './ids.js';
import type { KeysetPage, SortKeyDefinition } from './keysetPages.js';
import { createOutboxRecorder, type EventActor } from './outboxEvents.js';
import { InvalidValueError } from './workPlatformErrors.js';
import { changeWriter, checkText, creatorRemovedCondition, formatTimestamp, versionedRow, type ConstraintFields } from './workPlatformValues.js';

export { connectorKinds, type ConnectorKind, type ConnectorStatus };

export type Connector = components['schemas']['Connector'];
export type CreateConnectorInput = components['schemas']['ConnectorCreate'];

export const connectorSorts = sortFields.ConnectorSort;
export type ConnectorSort = (typeof connectorSorts)[number];
export type ConnectorListOptions = FilteredListOptions<ConnectorSort, 'kind' | 'creatorRemoved' | 'updatedSince'>;

/** The stored name's limit in characters (the contract's `Connector.name` maxLength). */
export const connectorNameLimit = maxLengths.Connector.name;

/** A credential ready to store: sealed by the caller, with what may be shown of it. */
export interface SealedCredential {
  sealed: string;
  /** The credential's last 4 characters. */
  hint: string;
  expiresAt: number | null;
  accountLogin: string;
}

/** A connector and its sealed credential (when it holds one), for an operation that uses it. */
export interface ConnectorWithCredential {
  connector: Connector;
  sealedCredential: string | null;
}

export interface ConnectorStoreOptions {
  now?: () => number;
  randomBytes?: RandomBytes;
}

export interface ConnectorStore {
  /** A new connector, `not_connected`; `id` only for seed data. */
  createConnector(workspaceId: string, input: CreateConnectorInput, actor: EventActor, options?: { id?: string }): Promise<Connector>;
  /** Undefined when missing or in another workspace. */
  getConnector(workspaceId: string, id: string): Promise<Connector | undefined>;
  /** The connector with its sealed credential, or undefined when missing. */
  getConnectorWithCredential(workspaceId: string, id: string): Promise<ConnectorWithCredential | undefined>;
  listConnectors(workspaceId: string, options: ConnectorListOptions): Promise<KeysetPage<Connector>>;
  /** Stores the credential (replacing any), `connected`. Records connector.connected. */
  connect(workspaceId: string, id: string, credential: SealedCredential, actor: EventActor): Promise<Connector>;
  /** Erases the credential, `disconnected`; a connector without one is returned unchanged. Records connector.disconnected. */
  disconnect(workspaceId: string, id: string, actor: EventActor): Promise<Connector>;
  /**
   * Stores `expired` and erases the credential, when the connector still holds `sealedCredential`
   * (a reconnection meanwhile is left alone). Records connector.expired. Returns the connector as it is then.
   */
  markExpired(workspaceId: string, id: string, sealedCredential: string, actor: EventActor): Promise<Connector>;
  deleteConnector(workspaceId: string, id: string, expectedVersion: number | null, actor: EventActor): Promise<Connector>;
}

type ConnectorRow = typeof connectors.$inferSelect;

const timestamp = (ms: number | null) => (ms === null ? null : formatTimestamp(ms));

/** The connector as the API shows it at `now`: a `connected` row past its credential's expiry is `expired`. */
export function toConnector(row: Omit<ConnectorRow, 'workspaceId' | 'sealedCredential'>, now: number): Connector {
  const lapsed = row.status === 'connected' && row.credentialExpiresAt !== null && row.credentialExpiresAt <= now;
  return {
    id: row.id,
    kind: row.kind,
    name: row.name,
    status: lapsed ? 'expired' : row.status,
    accountLogin: row.accountLogin,
    credentialHint: row.credentialHint === null ? null : `…${row.credentialHint}`,
    credentialExpiresAt: timestamp(row.credentialExpiresAt),
    connectedAt: timestamp(row.connectedAt),
    disconnectedAt: timestamp(row.disconnectedAt),
    expiredAt: lapsed ? timestamp(row.credentialExpiresAt) : timestamp(row.expiredAt),
    version: row.version,
    createdBy: row.createdBy,
    creatorRemoved: row.creatorRemovedAt !== null,
    createdAt: formatTimestamp(row.createdAt),
    updatedAt: formatTimestamp(row.updatedAt),
  };
}

type ListedConnectorRow = [
  id: string,
  sortKey: string | number,
  kind: ConnectorKind,
  name: string,
  status: ConnectorStatus,
  credentialHint: string | null,
  credentialExpiresAt: number | null,
  accountLogin: string | null,
  connectedAt: number | null,
  disconnectedAt: number | null,
  expiredAt: number | null,
  version: number,
  createdAt: number,
  updatedAt: number,
  createdBy: string | null,
  creatorRemovedAt: number | null,
];

const sortKeys: Record<ConnectorSort, SortKeyDefinition> = {
  createdAt: { expression: connectors.createdAt, keyType: 'number' },
  updatedAt: { expression: connectors.updatedAt, keyType: 'number' },
  name: { expression: connectors.name, keyType: 'string' },
};

const constraintFields: ConstraintFields = {
  connectors_name_length: { field: 'name', limit: connectorNameLimit },
};

export function createConnectorStore(source: StoreSource, options: ConnectorStoreOptions = {}): ConnectorStore {
  const now = options.now ?? Date.now;
  const randomBytes = options.randomBytes ?? defaultRandomBytes;
  const engine = engineOf(source);
  const { orm } = engine;
  const outbox = createOutboxRecorder(engine, randomBytes);

  const inWorkspace = and(eq(connectors.workspaceId, sql.placeholder('workspaceId')), eq(connectors.id, sql.placeholder('id')));
  const selectOne = engine.statement<ConnectorRow>(orm.select().from(connectors).where(inWorkspace));
  const insert = engine.statement(orm.insert(connectors).values(placeholdersFor(connectors)));
  const update = engine.statement(
    orm
      .update(connectors)
      .set({
        status: sql`${sql.placeholder('status')}`,
        sealedCredential: sql`${sql.placeholder('sealedCredential')}`,
        credentialHint: sql`${sql.placeholder('credentialHint')}`,
        credentialExpiresAt: sql`${sql.placeholder('credentialExpiresAt')}`,
        accountLogin: sql`${sql.placeholder('accountLogin')}`,
        connectedAt: sql`${sql.placeholder('connectedAt')}`,
        disconnectedAt: sql`${sql.placeholder('disconnectedAt')}`,
        expiredAt: sql`${sql.placeholder('expiredAt')}`,
        version: sql`${sql.placeholder('version')}`,
        updatedAt: sql`${sql.placeholder('updatedAt')}`,
      })
      .where(inWorkspace),
  );
  const remove = engine.statement(orm.delete(connectors).where(inWorkspace));

  const list = engineFilteredKeysetList(engine, {
    table: connectors,
    idColumn: connectors.id,
    workspaceColumn: connectors.workspaceId,
    columns: {
      kind: connectors.kind,
      name: connectors.name,
      status: connectors.status,
      credentialHint: connectors.credentialHint,
      credentialExpiresAt: connectors.credentialExpiresAt,
      accountLogin: connectors.accountLogin,
      connectedAt: connectors.connectedAt,
      disconnectedAt: connectors.disconnectedAt,
      expiredAt: connectors.expiredAt,
      version: connectors.version,
      createdAt: connectors.createdAt,
      updatedAt: connectors.updatedAt,
      createdBy: connectors.createdBy,
      creatorRemovedAt: connectors.creatorRemovedAt,
    },
    sortKeys,
    filters: {
      kind: eq(connectors.kind, sql.placeholder('kind')),
      creatorRemoved: creatorRemovedCondition(connectors.creatorRemovedAt),
      updatedSince: gte(connectors.updatedAt, sql.placeholder('updatedSince')),
    },
    toItem: ([id, , kind, name, status, credentialHint, credentialExpiresAt, accountLogin, connectedAt, disconnectedAt, expiredAt, version, createdAt, updatedAt, createdBy, creatorRemovedAt]: ListedConnectorRow) =>
      toConnector({ id, kind, name, status, credentialHint, credentialExpiresAt, accountLogin, connectedAt, disconnectedAt, expiredAt, version, createdAt, updatedAt, createdBy, creatorRemovedAt }, now()),
  });

  const write = changeWriter(engine, constraintFields);
  const currentRow = async (workspaceId: string, id: string, expectedVersion: number | null = null): Promise<ConnectorRow> =>
    versionedRow('connector', id, await selectOne.object({ workspaceId, id }), expectedVersion);

  /** Writes `next` as the row's new version and records `type` about it. */
  async function change(
    workspaceId: string,
    current: ConnectorRow,
    next: ConnectorRow,
    type: 'connector.connected' | 'connector.disconnected' | 'connector.expired',
    actor: EventActor,
  ): Promise<Connector> {
    next.version = current.version + 1;
    next.updatedAt = now();
    await update.run(next);
    const connector = toConnector(next, next.updatedAt);
    await outbox.record(workspaceId, type, actor, next.updatedAt, connector);
    return connector;
  }

  return {
    async createConnector(workspaceId, input, actor, createOptions = {}) {
      checkText('name', input.name, connectorNameLimit, { allowEmpty: false });
      if (!(connectorKinds as readonly unknown[]).includes(input.kind)) throw new InvalidValueError('kind', `must be one of ${connectorKinds.join(', ')}.`);
      const at = now();
      const row: ConnectorRow = {
        id: createOptions.id ?? newId('con', randomBytes),
        workspaceId,
        kind: input.kind,
        name: input.name,
        status: 'not_connected',
        sealedCredential: null,
        credentialHint: null,
        credentialExpiresAt: null,
        accountLogin: null,
        connectedAt: null,
        disconnectedAt: null,
        expiredAt: null,
        version: 1,
        createdAt: at,
        updatedAt: at,
        createdBy: actor.kind === 'USER' ? actor.id : null,
        creatorRemovedAt: null,
      };
      return write(async () => {
        await insert.run(row);
        const connector = toConnector(row, at);
        await outbox.record(workspaceId, 'connector.created', actor, at, connector);
        return connector;
      });
    },

    async getConnector(workspaceId, id) {
      const row = await engine.read(() => selectOne.object({ workspaceId, id }));
      return row ? toConnector(row, now()) : undefined;
    },

    async getConnectorWithCredential(workspaceId, id) {
      const row = await engine.read(() => selectOne.object({ workspaceId, id }));
      return row ? { connector: toConnector(row, now()), sealedCredential: row.sealedCredential } : undefined;
    },

    listConnectors: list,

    connect(workspaceId, id, credential, actor) {
      return write(async () => {
        const current = await currentRow(workspaceId, id);
        return change(
          workspaceId,
          current,
          {
            ...current,
            status: 'connected',
            sealedCredential: credential.sealed,
            credentialHint: credential.hint,
            credentialExpiresAt: credential.expiresAt,
            accountLogin: credential.accountLogin,
            connectedAt: now(),
            disconnectedAt: null,
            expiredAt: null,
          },
          'connector.connected',
          actor,
        );
      });
    },

    disconnect(workspaceId, id, actor) {
      return write(async () => {
        const current = await currentRow(workspaceId, id);
        if (current.status === 'not_connected' || current.status === 'disconnected') return toConnector(current, now());
        return change(
          workspaceId,
          current,
          { ...current, status: 'disconnected', sealedCredential: null, credentialHint: null, credentialExpiresAt: null, accountLogin: null, disconnectedAt: now(), expiredAt: null },
          'connector.disconnected',
          actor,
        );
      });
    },

    markExpired(workspaceId, id, sealedCredential, actor) {
      return write(async () => {
        const current = await currentRow(workspaceId, id);
        if (current.sealedCredential !== sealedCredential) return toConnector(current, now());
        const at = now();
        const expiredAt = current.credentialExpiresAt !== null && current.credentialExpiresAt <= at ? current.credentialExpiresAt : at;
        return change(workspaceId, current, { ...current, status: 'expired', sealedCredential: null, expiredAt }, 'connector.expired', actor);
      });
    },

    deleteConnector(workspaceId, id, expectedVersion, actor) {
      return write(async () => {
        const current = await currentRow(workspaceId, id, expectedVersion);
        await remove.run({ workspaceId, id });
        const at = now();
        const connector = toConnector(current, at);
        await outbox.record(workspaceId, 'connector.deleted', actor, at, connector);
        return connector;
      });
    },
  };
}

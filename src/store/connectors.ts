// Connectors of the Work-Platform API: a workspace's connections to outside services. Every read
// and write is scoped by workspace, every change bumps `version` and records its outbox event in
// the same transaction. The credential arrives here already sealed (the store never sees it in
// clear) and is kept only while it may be used. `expired` is stored when an operation finds it
// out (the service refused the credential, or its expiry had passed); a `connected` row whose
// expiry has passed is shown as `expired` at once.
import type { components } from '../../generated/work-platform/types.js';
import { maxLengths, sortFields } from '../../generated/work-platform/rules.js';
import type BetterSqlite3 from 'better-sqlite3';
import { and, eq, gte, sql } from 'drizzle-orm';
import { connectorKinds, connectors, type ConnectorKind, type ConnectorStatus } from '../../db/schema.js';
import { filteredKeysetList, type FilteredListOptions } from './crmLists.js';
import { drizzleFor, placeholdersFor } from './drizzle.js';
import { defaultRandomBytes, newId, type RandomBytes } from './ids.js';
import type { KeysetPage, SortKeyDefinition } from './keysetPages.js';
import { createOutboxWriter, type EventActor } from './outboxEvents.js';
import { InvalidValueError, NotFoundError } from './workPlatformErrors.js';
import { checkText, formatTimestamp, immediateWriter, versionedRow, type ConstraintFields } from './workPlatformValues.js';

export { connectorKinds, type ConnectorKind, type ConnectorStatus };

export type Connector = components['schemas']['Connector'];
export type CreateConnectorInput = components['schemas']['ConnectorCreate'];

export const connectorSorts = sortFields.ConnectorSort;
export type ConnectorSort = (typeof connectorSorts)[number];
export type ConnectorListOptions = FilteredListOptions<ConnectorSort, 'kind' | 'updatedSince'>;

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
  createConnector(workspaceId: string, input: CreateConnectorInput, actor: EventActor, options?: { id?: string }): Connector;
  /** Undefined when missing or in another workspace. */
  getConnector(workspaceId: string, id: string): Connector | undefined;
  /** The connector with its sealed credential, or undefined when missing. */
  getConnectorWithCredential(workspaceId: string, id: string): ConnectorWithCredential | undefined;
  listConnectors(workspaceId: string, options: ConnectorListOptions): KeysetPage<Connector>;
  /** Stores the credential (replacing any), `connected`. Records connector.connected. */
  connect(workspaceId: string, id: string, credential: SealedCredential, actor: EventActor): Connector;
  /** Erases the credential, `disconnected`; a connector without one is returned unchanged. Records connector.disconnected. */
  disconnect(workspaceId: string, id: string, actor: EventActor): Connector;
  /**
   * Stores `expired` and erases the credential, when the connector still holds `sealedCredential`
   * (a reconnection meanwhile is left alone). Records connector.expired. Returns the connector as it is then.
   */
  markExpired(workspaceId: string, id: string, sealedCredential: string, actor: EventActor): Connector;
  deleteConnector(workspaceId: string, id: string, expectedVersion: number | null, actor: EventActor): Connector;
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
];

const sortKeys: Record<ConnectorSort, SortKeyDefinition> = {
  createdAt: { expression: connectors.createdAt, keyType: 'number' },
  updatedAt: { expression: connectors.updatedAt, keyType: 'number' },
  name: { expression: connectors.name, keyType: 'string' },
};

const constraintFields: ConstraintFields = {
  connectors_name_length: { field: 'name', limit: connectorNameLimit },
};

export function createConnectorStore(db: BetterSqlite3.Database, options: ConnectorStoreOptions = {}): ConnectorStore {
  const now = options.now ?? Date.now;
  const randomBytes = options.randomBytes ?? defaultRandomBytes;
  const orm = drizzleFor(db);
  const outbox = createOutboxWriter(db, randomBytes);

  const inWorkspace = and(eq(connectors.workspaceId, sql.placeholder('workspaceId')), eq(connectors.id, sql.placeholder('id')));
  const selectOne = orm.select().from(connectors).where(inWorkspace).prepare();
  const insert = orm.insert(connectors).values(placeholdersFor(connectors)).prepare();
  const update = orm
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
    .where(inWorkspace)
    .prepare();
  const remove = orm.delete(connectors).where(inWorkspace).prepare();

  const list = filteredKeysetList(db, {
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
    },
    sortKeys,
    filters: {
      kind: eq(connectors.kind, sql.placeholder('kind')),
      updatedSince: gte(connectors.updatedAt, sql.placeholder('updatedSince')),
    },
    toItem: ([id, , kind, name, status, credentialHint, credentialExpiresAt, accountLogin, connectedAt, disconnectedAt, expiredAt, version, createdAt, updatedAt]: ListedConnectorRow) =>
      toConnector({ id, kind, name, status, credentialHint, credentialExpiresAt, accountLogin, connectedAt, disconnectedAt, expiredAt, version, createdAt, updatedAt }, now()),
  });

  const write = immediateWriter(orm, constraintFields);
  const currentRow = (workspaceId: string, id: string, expectedVersion: number | null = null): ConnectorRow =>
    versionedRow('connector', id, selectOne.get({ workspaceId, id }), expectedVersion);

  /** Writes `next` as the row's new version and records `type` about it. */
  function change(workspaceId: string, current: ConnectorRow, next: ConnectorRow, type: 'connector.connected' | 'connector.disconnected' | 'connector.expired', actor: EventActor): Connector {
    next.version = current.version + 1;
    next.updatedAt = now();
    update.run(next);
    const connector = toConnector(next, next.updatedAt);
    outbox.record(workspaceId, type, actor, next.updatedAt, connector);
    return connector;
  }

  return {
    createConnector(workspaceId, input, actor, createOptions = {}) {
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
      };
      return write(() => {
        insert.run(row);
        const connector = toConnector(row, at);
        outbox.record(workspaceId, 'connector.created', actor, at, connector);
        return connector;
      });
    },

    getConnector(workspaceId, id) {
      const row = selectOne.get({ workspaceId, id });
      return row ? toConnector(row, now()) : undefined;
    },

    getConnectorWithCredential(workspaceId, id) {
      const row = selectOne.get({ workspaceId, id });
      return row ? { connector: toConnector(row, now()), sealedCredential: row.sealedCredential } : undefined;
    },

    listConnectors: list,

    connect(workspaceId, id, credential, actor) {
      return write(() => {
        const current = currentRow(workspaceId, id);
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
      return write(() => {
        const current = currentRow(workspaceId, id);
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
      return write(() => {
        const current = currentRow(workspaceId, id);
        if (current.sealedCredential !== sealedCredential) return toConnector(current, now());
        const at = now();
        const expiredAt = current.credentialExpiresAt !== null && current.credentialExpiresAt <= at ? current.credentialExpiresAt : at;
        return change(workspaceId, current, { ...current, status: 'expired', sealedCredential: null, expiredAt }, 'connector.expired', actor);
      });
    },

    deleteConnector(workspaceId, id, expectedVersion, actor) {
      return write(() => {
        const current = currentRow(workspaceId, id, expectedVersion);
        remove.run({ workspaceId, id });
        const at = now();
        const connector = toConnector(current, at);
        outbox.record(workspaceId, 'connector.deleted', actor, at, connector);
        return connector;
      });
    },
  };
}

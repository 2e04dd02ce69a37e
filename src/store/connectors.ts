// Connectors of the Work-Platform API: a workspace's connections to outside services. Every read
// and write is scoped by workspace, every change bumps `version` and records its outbox event in
// the same transaction. The credential arrives here already sealed (the store never sees it in
// clear) and is kept only while it may be used. `expired` is stored when an operation finds it
// out (the service refused the credential, or its expiry had passed); a `connected` row whose
// expiry has passed is shown as `expired` at once.
import type { components } from '../../generated/work-platform/types.js';
import { maxLengths, sortFields } from '../../generated/work-platform/rules.js';
import { eq, gte, sql } from 'drizzle-orm';
import { connectorKinds, connectors, type ConnectorKind, type ConnectorStatus } from '../../db/schema.js';
import { engineOf, type StoreSource } from './engine.js';
import type { FilteredListOptions } from './filteredLists.js';
import { defaultRandomBytes, newId } from './ids.js';
import type { KeysetPage, SortKeyDefinition } from './keysetPages.js';
import type { EventActor } from './outboxEvents.js';
import { versionedResource, type VersionedResourceOptions } from './versionedResources.js';
import { InvalidValueError } from './workPlatformErrors.js';
import { checkText, creatorRemovedCondition, formatTimestamp, type ConstraintFields } from './workPlatformValues.js';

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

export type ConnectorStoreOptions = VersionedResourceOptions;

export interface ConnectorStore {
  /** A new connector, `not_connected`; `id` only for seed data. */
  createConnector(workspaceId: string, input: CreateConnectorInput, actor: EventActor, options?: { id?: string }): Promise<Connector>;
  /** Undefined when missing or in another workspace. */
  getConnector(workspaceId: string, id: string): Promise<Connector | undefined>;
  /** The connector with its sealed credential, or undefined when missing. */
  getConnectorWithCredential(workspaceId: string, id: string): Promise<ConnectorWithCredential | undefined>;
  /** As of now, and until a connector listed connected is shown expired (`shownUntil`). */
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

const sortKeys: Record<ConnectorSort, SortKeyDefinition> = {
  createdAt: { expression: connectors.createdAt, keyType: 'number' },
  updatedAt: { expression: connectors.updatedAt, keyType: 'number' },
  name: { expression: connectors.name, keyType: 'string' },
};

const constraintFields: ConstraintFields = {
  connectors_name_length: { field: 'name', limit: connectorNameLimit },
};

/** When the first of these connectors, shown connected, is shown expired: its credential's expiry. */
function firstLapse(items: readonly Connector[]): number | undefined {
  let first: number | undefined;
  for (const connector of items) {
    if (connector.status !== 'connected' || connector.credentialExpiresAt === null) continue;
    const lapse = Date.parse(connector.credentialExpiresAt);
    if (first === undefined || lapse < first) first = lapse;
  }
  return first;
}

export function createConnectorStore(source: StoreSource, options: ConnectorStoreOptions = {}): ConnectorStore {
  const resource = versionedResource(
    engineOf(source),
    {
      table: connectors,
      entity: 'connector',
      constraintFields,
      toItem: toConnector,
      shownAsOf: true,
      sortKeys,
      filters: {
        kind: eq(connectors.kind, sql.placeholder('kind')),
        creatorRemoved: creatorRemovedCondition(connectors.creatorRemovedAt),
        updatedSince: gte(connectors.updatedAt, sql.placeholder('updatedSince')),
      },
      unlisted: ['sealedCredential'],
    },
    options,
  );
  const { now, write } = resource;
  const currentRow = (workspaceId: string, id: string) => resource.current(workspaceId, id, null);

  return {
    async createConnector(workspaceId, input, actor, createOptions = {}) {
      checkText('name', input.name, connectorNameLimit, { allowEmpty: false });
      if (!(connectorKinds as readonly unknown[]).includes(input.kind)) throw new InvalidValueError('kind', `must be one of ${connectorKinds.join(', ')}.`);
      const at = now();
      const row: ConnectorRow = {
        id: createOptions.id ?? newId('con', options.randomBytes ?? defaultRandomBytes),
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
      return resource.create(row, actor);
    },

    getConnector: resource.get,

    async getConnectorWithCredential(workspaceId, id) {
      const row = await resource.read(workspaceId, id);
      return row ? { connector: toConnector(row, now()), sealedCredential: row.sealedCredential } : undefined;
    },

    async listConnectors(workspaceId, listOptions) {
      const page = await resource.list(workspaceId, listOptions);
      const shownUntil = firstLapse(page.items);
      return shownUntil === undefined ? page : { ...page, shownUntil };
    },

    connect(workspaceId, id, credential, actor) {
      return write(async () => {
        const current = await currentRow(workspaceId, id);
        return resource.save(
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
          actor,
          ['connector.connected'],
        );
      });
    },

    disconnect(workspaceId, id, actor) {
      return write(async () => {
        const current = await currentRow(workspaceId, id);
        if (current.status === 'not_connected' || current.status === 'disconnected') return toConnector(current, now());
        return resource.save(
          current,
          { ...current, status: 'disconnected', sealedCredential: null, credentialHint: null, credentialExpiresAt: null, accountLogin: null, disconnectedAt: now(), expiredAt: null },
          actor,
          ['connector.disconnected'],
        );
      });
    },

    markExpired(workspaceId, id, sealedCredential, actor) {
      return write(async () => {
        const current = await currentRow(workspaceId, id);
        if (current.sealedCredential !== sealedCredential) return toConnector(current, now());
        const at = now();
        const expiredAt = current.credentialExpiresAt !== null && current.credentialExpiresAt <= at ? current.credentialExpiresAt : at;
        return resource.save(current, { ...current, status: 'expired', sealedCredential: null, expiredAt }, actor, ['connector.expired']);
      });
    },

    deleteConnector: (workspaceId, id, expectedVersion, actor) => resource.delete(workspaceId, id, expectedVersion, actor),
  };
}

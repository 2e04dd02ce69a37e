// oidc-provider's storage interface over our stores. Every model lives in oauth_records, keyed by
// the SHA-256 of its id: the id of an opaque token, code or session cookie is the bearer secret
// itself, so it is never written (`jti` is stripped from the payload and given back on `find`, by
// a caller who already holds it). Clients come from oauth_clients, with secrets only as hashes.
import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { OauthClient, OauthClientStore } from '../../store/oauthClients.js';
import type { OauthRecordStore, StoredOauthRecord } from '../../store/oauthRecords.js';
import { oauthSecretHash } from './oauthCredentials.js';

/** The metadata oidc-provider validates a client by; `client_secret` is the hash (see compareClientSecret). */
export function clientMetadata(client: OauthClient): Record<string, unknown> {
  return {
    client_id: client.id,
    client_name: client.name,
    redirect_uris: client.redirectUris,
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: client.secretHash === null ? 'none' : 'client_secret_basic',
    ...(client.secretHash === null ? {} : { client_secret: client.secretHash }),
  };
}

class RecordAdapter implements Adapter {
  constructor(
    private readonly model: string,
    private readonly records: OauthRecordStore,
    private readonly now: () => number,
    /** Interactions kept per client (the oldest dropped beyond it); only the Interaction model's adapter uses it. */
    private readonly interactionsPerClient: number,
  ) {}

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    const { jti: _jti, ...stored } = payload;
    // An interaction keeps its browser session's cookie value, which nothing reads back: not stored.
    const session = stored.session as Record<string, unknown> | undefined;
    if (this.model === 'Interaction' && session && 'cookie' in session) {
      const { cookie: _cookie, ...rest } = session;
      stored.session = rest;
    }
    const params = stored.params as Record<string, unknown> | undefined;
    const record = {
      model: this.model,
      idHash: oauthSecretHash(id),
      payload: JSON.stringify(stored),
      // A grant names itself, so that one statement finds a grant and everything issued under it.
      grantId: this.model === 'Grant' ? id : stringOrNull(payload.grantId),
      clientId: stringOrNull(payload.clientId ?? params?.client_id),
      accountId: stringOrNull(payload.accountId ?? session?.accountId),
      uid: stringOrNull(payload.uid),
      expiresAt: typeof expiresIn === 'number' ? this.now() + expiresIn * 1000 : null,
    };
    const { clientId } = record;
    if (this.model === 'Interaction' && clientId !== null) await this.records.saveInteraction({ ...record, clientId }, this.interactionsPerClient);
    else await this.records.save(record);
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    return hydrate(await this.records.find(this.model, oauthSecretHash(id)), id);
  }

  /**
   * Sessions only. The raw session id cannot be recovered from its hash, so the session comes back
   * without `jti`; oidc-provider only reads it (interaction details), it never saves it again.
   */
  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    return hydrate(await this.records.findByUid(this.model, uid), undefined);
  }

  /** The device flow is not enabled. */
  async findByUserCode(): Promise<AdapterPayload | undefined> {
    return undefined;
  }

  async consume(id: string): Promise<void> {
    await this.records.consume(this.model, oauthSecretHash(id));
  }

  async destroy(id: string): Promise<void> {
    await this.records.destroy(this.model, oauthSecretHash(id));
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await this.records.revokeByGrantId(this.model, grantId);
  }
}

/** Clients are registered by the admin CLI, never by oidc-provider. */
class ClientAdapter implements Adapter {
  constructor(private readonly clients: Pick<OauthClientStore, 'getOauthClient'>) {}

  async find(id: string): Promise<AdapterPayload | undefined> {
    const client = await this.clients.getOauthClient(id);
    return client ? clientMetadata(client) : undefined;
  }

  async upsert(): Promise<void> {
    throw new Error('OAuth clients are registered with the admin CLI');
  }

  async destroy(): Promise<void> {
    throw new Error('OAuth clients are deleted with the admin CLI');
  }

  async findByUid(): Promise<undefined> {
    return undefined;
  }

  async findByUserCode(): Promise<undefined> {
    return undefined;
  }

  async consume(): Promise<void> {}

  async revokeByGrantId(): Promise<void> {}
}

function hydrate(record: StoredOauthRecord | undefined, id: string | undefined): AdapterPayload | undefined {
  if (!record) return undefined;
  const payload = JSON.parse(record.payload) as AdapterPayload;
  if (id !== undefined) payload.jti = id;
  if (record.consumedAt !== null) payload.consumed = Math.floor(record.consumedAt / 1000);
  return payload;
}

function stringOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/** oidc-provider's `adapter` setting: a factory it calls once per model. */
export function oauthAdapterFactory(
  records: OauthRecordStore,
  clients: Pick<OauthClientStore, 'getOauthClient'>,
  now: () => number,
  interactionsPerClient: number,
): (model: string) => Adapter {
  const clientAdapter = new ClientAdapter(clients);
  return (model) => (model === 'Client' ? clientAdapter : new RecordAdapter(model, records, now, interactionsPerClient));
}

// oidc-provider 9 ships no type declarations; these cover what src/auth/oauth/ uses of it.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  /** oidc-provider's Koa context: `oidc` carries the request's client, route, params, session and entities. */
  export interface ProviderContext {
    oidc?: {
      route?: string;
      client?: ProviderClient;
      params?: Record<string, unknown>;
      session?: { accountId?: string };
      entities?: Record<string, unknown>;
    };
    get(header: string): string;
    set(header: string, value: string): void;
    /** The first of `types` the request's Accept prefers, or false. */
    accepts(...types: string[]): string | false;
    response: { is(...types: string[]): string | false | null };
    method: string;
    path: string;
    type: string;
    body: unknown;
    status: number;
    req: IncomingMessage;
    res: ServerResponse;
  }

  export interface ProviderClient {
    clientId: string;
    clientAuthMethod: string;
    clientSecret?: string;
  }

  export interface AdapterPayload {
    [key: string]: unknown;
    jti?: string;
    grantId?: string;
    clientId?: string;
    accountId?: string;
    uid?: string;
    consumed?: unknown;
  }

  export interface Adapter {
    upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void>;
    find(id: string): Promise<AdapterPayload | undefined>;
    findByUid(uid: string): Promise<AdapterPayload | undefined>;
    findByUserCode(userCode: string): Promise<AdapterPayload | undefined>;
    consume(id: string): Promise<void>;
    destroy(id: string): Promise<void>;
    revokeByGrantId(grantId: string): Promise<void>;
  }

  export interface Interaction {
    uid: string;
    prompt: { name: string; reasons: string[]; details: Record<string, unknown> };
    params: Record<string, unknown>;
    grantId?: string;
    session?: { accountId?: string; uid?: string };
    returnTo: string;
  }

  export interface InteractionResults {
    login?: { accountId: string; remember?: boolean };
    consent?: { grantId: string };
    error?: string;
    error_description?: string;
  }

  export class Grant {
    constructor(properties: { accountId: string; clientId: string });
    accountId: string;
    clientId: string;
    addResourceScope(resource: string, scope: string): void;
    rejectResourceScope(resource: string, scope: string): void;
    save(): Promise<string>;
  }

  export class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    proxy: boolean;
    readonly Client: { prototype: { compareClientSecret(this: ProviderClient, presented: string): Promise<boolean> } };
    readonly Grant: typeof Grant;
    callback(): (req: IncomingMessage, res: ServerResponse) => Promise<void>;
    use(middleware: (ctx: ProviderContext, next: () => Promise<void>) => Promise<void>): void;
    on(event: string, listener: (...args: any[]) => void): this;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<Interaction>;
    interactionFinished(req: IncomingMessage, res: ServerResponse, result: InteractionResults, options?: { mergeWithLastSubmission?: boolean }): Promise<void>;
  }

  export class Check {
    static REQUEST_PROMPT: true;
    static NO_NEED_TO_PROMPT: false;
    constructor(reason: string, description: string, check: (ctx: ProviderContext) => boolean | Promise<boolean>);
  }

  export const interactionPolicy: {
    Check: typeof Check;
    base(): { get(name: string): { checks: { add(check: Check): void } } | undefined };
  };

  export class OIDCProviderError extends Error {
    error: string;
    error_description?: string;
    statusCode: number;
  }

  export const errors: {
    InvalidTarget: new (description?: string) => OIDCProviderError;
    OIDCProviderError: typeof OIDCProviderError;
  };

  export default Provider;
}

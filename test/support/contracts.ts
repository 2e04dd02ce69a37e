// Contract calls of the operation suites, as the demo owner's all-scope PAT unless a token is given.
// `app` is read at each call, so they can be made before the app starts.
import { expectSuccess, jsonHeaders } from './workPlatform.js';
import type { WorkPlatformTestApp } from './workPlatformApp.js';

export type ContractMoveName = 'send' | 'sign' | 'decline' | 'withdraw';

/** A calendar day `days` after the instant `at` (UTC), as `YYYY-MM-DD`. */
export function dayAfter(at: number, days: number): string {
  return new Date(at + days * 86_400_000).toISOString().slice(0, 10);
}

/** `now` is the app's clock (a test that injects one passes it), for the expiry days of new contracts. */
export function contractCalls(app: () => WorkPlatformTestApp, now: () => number = Date.now) {
  const send = (method: string, path: string, body?: unknown, extra: Record<string, string> = {}, token?: string) =>
    app().client.request(method, path, {
      headers: jsonHeaders(token ?? app().fx.tokens.all, extra),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const ifMatch = (version?: string): Record<string, string> => (version === undefined ? {} : { 'if-match': version });
  const calls = {
    create: (body: unknown, extra: Record<string, string> = {}, token?: string) => send('POST', '/v1/contracts', body, extra, token),
    get: (id: string, token?: string) => send('GET', `/v1/contracts/${id}`, undefined, {}, token),
    update: (id: string, body: unknown, version?: string, token?: string) => send('PATCH', `/v1/contracts/${id}`, body, ifMatch(version), token),
    remove: (id: string, version?: string, token?: string) => send('DELETE', `/v1/contracts/${id}`, undefined, ifMatch(version), token),
    move: (id: string, move: ContractMoveName, extra: Record<string, string> = {}, token?: string) =>
      send('POST', `/v1/contracts/${id}/${move}`, undefined, extra, token),
    list: (query: Record<string, string | number> = {}, token?: string) => {
      const params = new URLSearchParams(Object.entries(query).map(([name, value]) => [name, String(value)]));
      return send('GET', `/v1/contracts?${params}`, undefined, {}, token);
    },
    /** A draft naming the first demo company, expiring 30 days after the app's clock. */
    async newContract(body: Record<string, unknown> = {}): Promise<any> {
      return expectSuccess(await calls.create({ title: 'A contract', companyId: app().fx.crm.companyIds[0], expiresOn: dayAfter(now(), 30), ...body }), 201);
    },
    /** A contract moved through `moves` from draft. */
    async contractIn(moves: ContractMoveName[], body: Record<string, unknown> = {}): Promise<any> {
      let contract = await calls.newContract(body);
      for (const move of moves) contract = expectSuccess(await calls.move(contract.id, move), 200);
      return contract;
    },
  };
  return calls;
}

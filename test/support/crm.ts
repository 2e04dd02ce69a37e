// CRM calls (companies, contacts, deals) of the operation suites, as the demo owner's all-scope
// PAT unless a token is given. `app` is read at each call, so they can be made before the app starts.
import { expectSuccess } from './workPlatform.js';
import { ownerRequests } from './workPlatformApp.js';
import { type WorkPlatformTestApp } from './testApp.js';

export const crmCollections = { company: 'companies', contact: 'contacts', deal: 'deals' } as const;
export type CrmKind = keyof typeof crmCollections;

export function crmCalls(app: () => WorkPlatformTestApp) {
  const { send, ifMatch } = ownerRequests(app);
  const calls = {
    send,
    create: (kind: CrmKind, body: unknown, extra: Record<string, string> = {}, token?: string) => send('POST', `/v1/${crmCollections[kind]}`, body, extra, token),
    get: (kind: CrmKind, id: string, token?: string) => send('GET', `/v1/${crmCollections[kind]}/${id}`, undefined, {}, token),
    update: (kind: CrmKind, id: string, body: unknown, version?: string, token?: string) =>
      send('PATCH', `/v1/${crmCollections[kind]}/${id}`, body, ifMatch(version), token),
    remove: (kind: CrmKind, id: string, version?: string, token?: string) => send('DELETE', `/v1/${crmCollections[kind]}/${id}`, undefined, ifMatch(version), token),
    list: (kind: CrmKind, query: Record<string, string | number> = {}, token?: string) => {
      const params = new URLSearchParams(Object.entries(query).map(([name, value]) => [name, String(value)]));
      return send('GET', `/v1/${crmCollections[kind]}?${params}`, undefined, {}, token);
    },
    async newCompany(body: Record<string, unknown> = {}): Promise<any> {
      return expectSuccess(await calls.create('company', { name: 'A company', ...body }), 201);
    },
    async newContact(body: Record<string, unknown> = {}): Promise<any> {
      return expectSuccess(await calls.create('contact', { name: 'A contact', ...body }), 201);
    },
    async newDeal(body: Record<string, unknown> = {}): Promise<any> {
      return expectSuccess(await calls.create('deal', { title: 'A deal', amountMinor: 1000, currency: 'EUR', ownerId: 'usr_demoOwnerMara', ...body }), 201);
    },
  };
  return calls;
}

import { afterAll, describe, expect, it } from 'vitest';
import { createAjv2020 } from '../../src/contract/ajv.js';
import { createContractStore } from '../../src/store/contracts.js';
import type { ContractClient } from '../support/contractClient.js';
import { type TestApp, useTestApp, type WorkPlatformFixture } from '../support/testApp.js';
import { insertionOrderSql, jsonHeaders } from '../support/workPlatform.js';
import { startGithubApiServer } from '../support/githubApiServer.js';

/** The outbox records exactly what the contract's `webhooks` section promises subscribers. */
let t: TestApp;
let client: ContractClient;
let fx: WorkPlatformFixture;
// connector.connected needs a GitHub that accepts the token.
const github = await startGithubApiServer();
afterAll(() => github.close());
useTestApp(({ workPlatform: app }) => ({ t, client, fx } = app), { liftCallLimits: true, env: { GITHUB_API_BASE_URL: github.baseUrl } });

describe('recorded events', () => {
  it('match the webhook schema of their type, for every event type of the catalogue, and come from what x-emitted-by names', async () => {
    const headers = jsonHeaders(fx.tokens.all);
    /** What recorded each event: the operation a call was routed to, or the job run in its place. */
    const recordedBy: { type: string; source: string }[] = [];
    const eventsInOrder = () => t.sql.rows<{ id: string; type: string; payload: string }>(`SELECT id, type, payload FROM events WHERE workspace_id = ? ORDER BY ${insertionOrderSql(t.engineKind)}`, fx.workspaceId);
    const attributed = new Set((await eventsInOrder()).map((row) => row.id));
    const attribute = async (source: string) => {
      for (const row of await eventsInOrder()) {
        if (attributed.has(row.id)) continue;
        attributed.add(row.id);
        recordedBy.push({ type: row.type, source });
      }
    };
    const send = async (method: string, path: string, body?: unknown, ifMatch?: string) => {
      const response = await client.request(method, path, { headers: ifMatch ? { ...headers, 'if-match': ifMatch } : headers, body: body === undefined ? undefined : JSON.stringify(body) });
      await attribute(response.operationId ?? `${method} ${path}`);
      return response.body;
    };
    const project = await send('POST', '/v1/projects', { name: 'Events' });
    await send('PATCH', `/v1/projects/${project.id}`, { description: 'x' }, '1');
    const task = await send('POST', '/v1/tasks', { projectId: project.id, title: 'Emit' });
    await send('PATCH', `/v1/tasks/${task.id}`, { status: 'DONE' }, '1');
    await send('DELETE', `/v1/tasks/${task.id}`);
    await send('DELETE', `/v1/projects/${project.id}`);
    const company = await send('POST', '/v1/companies', { name: 'Events Co' });
    await send('PATCH', `/v1/companies/${company.id}`, { domain: 'events.example' }, '1');
    const contact = await send('POST', '/v1/contacts', { name: 'Eve Events', companyId: company.id });
    await send('PATCH', `/v1/contacts/${contact.id}`, { phone: '+1555' }, '1');
    const deal = await send('POST', '/v1/deals', { title: 'Events deal', amountMinor: 100, currency: 'EUR', ownerId: 'usr_demoOwnerMara', contactIds: [contact.id] });
    await send('PATCH', `/v1/deals/${deal.id}`, { stage: 'won' }, '1');
    await send('DELETE', `/v1/deals/${deal.id}`);
    await send('DELETE', `/v1/contacts/${contact.id}`);
    await send('DELETE', `/v1/companies/${company.id}`);
    const today = new Date().toISOString().slice(0, 10);
    const signed = await send('POST', '/v1/contracts', { title: 'Events contract', dealId: fx.crm.dealIds[0], expiresOn: '2099-12-31' });
    await send('PATCH', `/v1/contracts/${signed.id}`, { body: 'Terms' }, '1');
    for (const move of ['send', 'withdraw', 'send', 'sign']) await send('POST', `/v1/contracts/${signed.id}/${move}`);
    const declined = await send('POST', '/v1/contracts', { title: 'Declined', companyId: fx.crm.companyIds[0], expiresOn: '2099-12-31' });
    for (const move of ['send', 'decline']) await send('POST', `/v1/contracts/${declined.id}/${move}`);
    await send('DELETE', `/v1/contracts/${declined.id}`);
    const lapsing = await send('POST', '/v1/contracts', { title: 'Lapsing', companyId: fx.crm.companyIds[0], expiresOn: today });
    await send('POST', `/v1/contracts/${lapsing.id}/send`);
    // The server's expiry sweep, two days on.
    await createContractStore(t.store, { now: () => Date.now() + 2 * 86_400_000 }).expireOverdueContracts();
    await attribute('job:expire-overdue-contracts');
    const connector = await send('POST', '/v1/connectors', { kind: 'github', name: 'Events GitHub' });
    await send('PUT', `/v1/connectors/${connector.id}/connection`, { token: 'ghp_eventsToken0001' });
    await send('DELETE', `/v1/connectors/${connector.id}/connection`);
    await send('DELETE', `/v1/connectors/${connector.id}`);
    await send('POST', `/v1/connectors/${fx.connectors.expired}/issue-imports`, { repository: 'acme/events', projectId: fx.projectId });

    const document = client.document as { webhooks: Record<string, { post: { 'x-emitted-by': string[] } }> };
    expect(recordedBy.filter(({ type, source }) => !document.webhooks[type]!.post['x-emitted-by'].includes(source))).toEqual([]);
    expect(recordedBy.map(({ type }) => type)).toEqual(
      (await eventsInOrder()).map((row) => row.type),
    );
    const ajv = createAjv2020({ validateSchema: false });
    ajv.addSchema(document, 'events-contract');
    const rows = await eventsInOrder();
    expect(rows.map((row) => row.type)).toEqual(['project.created', 'project.updated', 'task.created', 'task.updated', 'task.completed', 'task.deleted', 'project.deleted',
      'company.created', 'company.updated', 'contact.created', 'contact.updated', 'deal.created', 'deal.updated', 'deal.stage_changed',
      'deal.deleted', 'contact.deleted', 'company.deleted',
      'contract.created', 'contract.updated', 'contract.sent', 'contract.withdrawn', 'contract.sent', 'contract.signed',
      'contract.created', 'contract.sent', 'contract.declined', 'contract.deleted', 'contract.created', 'contract.sent', 'contract.expired',
      'connector.created', 'connector.connected', 'connector.disconnected', 'connector.deleted', 'connector.expired']);
    expect(new Set(rows.map((row) => row.type))).toEqual(new Set(Object.keys(document.webhooks)));
    for (const row of rows) {
      const validate = ajv.getSchema(`events-contract#/webhooks/${row.type}/post/requestBody/content/application~1json/schema`)
        ?? ajv.compile({ $ref: `events-contract#/webhooks/${row.type}/post/requestBody/content/application~1json/schema` });
      const envelope = JSON.parse(row.payload);
      expect(validate(envelope), `${row.type}: ${ajv.errorsText(validate.errors)}`).toBe(true);
      expect(envelope.type).toBe(row.type);
      expect(validate({ ...envelope, apiVersion: '1999-01-01' }), 'a changed envelope must not pass').toBe(false);
    }
  });
});

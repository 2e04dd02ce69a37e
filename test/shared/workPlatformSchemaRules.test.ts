// The goal of the schema rules (issue 24, item 3): a value that a request schema of the served document admits is
// accepted, or refused with a problem type that the operation lists in its `x-problem-types`; a value it refuses
// gets the answer the contract gives (400 `value-too-long` for lengths alone, 400 `invalid-if-match`, 422 otherwise).
// Each case first proves with the served document's own schemas that the value is admitted (or refused), then sends it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { createAjv2020 } from '../../src/contract/ajv.js';
import type { CheckedResponse, ContractClient } from '../support/contractClient.js';
import { contractCalls, dayAfter } from '../support/contracts.js';
import { crmCalls } from '../support/crm.js';
import { type TestApp, startTestApp, useTestApp, type WorkPlatformFixture, type WorkPlatformTestApp } from '../support/testApp.js';
import { expectProblem, expectSuccess, jsonHeaders } from '../support/workPlatform.js';
import { workPlatformCalls } from '../support/workPlatformApp.js';

let t: TestApp;
let client: ContractClient;
let fx: WorkPlatformFixture;
let served: Served;
useTestApp(async ({ workPlatform: app }) => {
  ({ t, client, fx } = app);
  served = await servedDocument(app);
}, { liftCallLimits: true });
const calls = workPlatformCalls(() => ({ t, client, fx }));
const crm = crmCalls(() => ({ t, client, fx }));
const contracts = contractCalls(() => ({ t, client, fx }));
const expiresOn = dayAfter(Date.now(), 30);

interface Served {
  document: any;
  /** Whether the served schema at `#/components/...` admits the value. */
  admits(pointer: string, value: unknown): boolean;
  /** The operation's `x-problem-types`. */
  listed(operationId: string): string[];
}

async function servedDocument(app: WorkPlatformTestApp): Promise<Served> {
  const document = expectSuccess(await app.client.get('/v1/openapi.json'), 200);
  const ajv = createAjv2020({ validateSchema: false });
  ajv.addSchema(document, 'served');
  const operations = new Map<string, any>();
  for (const item of Object.values<any>(document.paths)) for (const operation of Object.values<any>(item)) if (operation?.operationId) operations.set(operation.operationId, operation);
  return {
    document,
    admits: (pointer, value) => ajv.validate({ $ref: `served${pointer}` }, value) as boolean,
    listed: (operationId) => {
      const listed = operations.get(operationId)?.['x-problem-types'];
      expect(Array.isArray(listed) && listed.length > 0, `${operationId} lists its problem types`).toBe(true);
      return listed;
    },
  };
}

/** A refusal of an admitted value: its problem type is one the operation lists (and the client checked the answer against the contract). */
function expectListedRefusal(response: CheckedResponse, operationId: string, status: number, slug: string, code?: string): any {
  const body = expectProblem(response, status, slug as never, code);
  expect(served.listed(operationId)).toContain(slug);
  return body;
}

const TASK_CREATE = '#/components/schemas/TaskCreate';

describe('x-problem-types', () => {
  it('lists, on every operation, only problem types of the Problem schema whose status the operation declares', () => {
    const types = served.document.components.schemas.Problem['x-problem-types'];
    for (const item of Object.values<any>(served.document.paths)) {
      for (const operation of Object.values<any>(item)) {
        if (!operation?.operationId) continue;
        const statuses = Object.keys(operation.responses);
        for (const slug of served.listed(operation.operationId)) {
          expect(types[slug], `${operation.operationId}: ${slug}`).toBeDefined();
          expect(statuses, `${operation.operationId}: ${slug}`).toContain(String(types[slug].status));
        }
      }
    }
    expect(served.listed('listTasks')).toEqual(expect.arrayContaining(['validation', 'bad-request']));
    expect(served.listed('draftTasks')).toContain('ai-spend-cap-exceeded');
    expect(served.listed('listTasks')).not.toContain('ai-spend-cap-exceeded');
    // A download: the CORS 403 and what every path answers (x-conventions), nothing a credential or a body brings.
    expect(served.listed('getOpenapiJson')).toEqual(['bad-request', 'forbidden', 'method-not-allowed', 'request-timeout', 'request-header-fields-too-large', 'internal']);
  });
});

describe('storage limits (maxLength)', () => {
  it('accepts a value at its limit, counted in characters (code points)', async () => {
    const title = '😀'.repeat(200);
    expect(served.admits(TASK_CREATE, { projectId: fx.projectId, title })).toBe(true);
    expect(expectSuccess(await calls.createTask({ projectId: fx.projectId, title }), 201).title).toBe(title);
  });

  it('answers 400 value-too-long with errors[] when lengths are the only failures, declared on the operation', async () => {
    expect(served.admits(TASK_CREATE, { projectId: fx.projectId, title: 't'.repeat(201) })).toBe(false);
    expect(Object.keys(served.document.paths['/v1/tasks'].post.responses)).toContain('400');
    const problem = expectListedRefusal(await calls.createTask({ projectId: fx.projectId, title: 't'.repeat(201) }), 'createTask', 400, 'bad-request', 'value-too-long');
    expect(problem.errors).toEqual([{ path: '/title', code: 'too_big', message: 'must have at most 200 characters' }]);
    const contact = expectListedRefusal(await crm.create('contact', { name: 'n'.repeat(201), phone: '1'.repeat(41) }), 'createContact', 400, 'bad-request', 'value-too-long');
    expect(contact.errors.map((issue: { path: string; code: string }) => [issue.path, issue.code])).toEqual([
      ['/name', 'too_big'],
      ['/phone', 'too_big'],
    ]);
    const task = await calls.newTask();
    expectListedRefusal(await calls.updateTask(task.id, { title: 'u'.repeat(201) }, String(task.version)), 'updateTask', 400, 'bad-request', 'value-too-long');
  });

  it('answers 422 listing every failure when a too-long value comes with another failure', async () => {
    const problem = expectListedRefusal(await calls.createTask({ projectId: fx.projectId, title: 't'.repeat(201), priority: 'URGENT' }), 'createTask', 422, 'validation');
    expect(problem.errors.map((issue: { path: string; code: string }) => [issue.path, issue.code]).sort()).toEqual([
      ['/priority', 'invalid_enum_value'],
      ['/title', 'too_big'],
    ]);
  });

  it('declares on every Create/Update member the limit of its resource schema', () => {
    const schemas = served.document.components.schemas;
    let checked = 0;
    for (const [name, schema] of Object.entries<any>(schemas)) {
      const resource = schemas[/^(.+)(?:Create|Update)$/.exec(name)?.[1] ?? ''];
      for (const [member, stored] of Object.entries<any>(resource?.properties ?? {})) {
        if (typeof stored.maxLength !== 'number' || !schema.properties?.[member]) continue;
        expect(schema.properties[member].maxLength ?? schemas.WebhookUrl.maxLength, `${name}.${member}`).toBe(stored.maxLength);
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(24);
  });
});

describe('If-Match', () => {
  const IF_MATCH = '#/components/parameters/IfMatchRequired/schema';

  it('admits a version, bare or quoted: a current one is accepted, a stale one answers 409 (listed)', async () => {
    const task = await calls.newTask();
    expect(served.admits(IF_MATCH, `"${task.version}"`) && served.admits(IF_MATCH, '999')).toBe(true);
    const updated = expectSuccess(await calls.updateTask(task.id, { title: 'Once' }, `"${task.version}"`), 200);
    expectListedRefusal(await calls.updateTask(task.id, { title: 'Twice' }, String(task.version)), 'updateTask', 409, 'conflict', 'version-conflict');
    expectSuccess(await calls.updateTask(task.id, { title: 'Twice' }, String(updated.version)), 200);
  });

  it.each(['*', 'W/"1"', '"1", "2"', '1.0', '"x"'])('refuses %s with 400 invalid-if-match, on PATCH and DELETE alike, and changes nothing', async (value) => {
    const task = await calls.newTask();
    expect(served.admits(IF_MATCH, value)).toBe(false);
    expectListedRefusal(await calls.updateTask(task.id, { title: 'Changed' }, value), 'updateTask', 400, 'bad-request', 'invalid-if-match');
    expectListedRefusal(await client.request('DELETE', `/v1/tasks/${task.id}`, { headers: jsonHeaders(fx.tokens.all, { 'if-match': value }) }), 'deleteTask', 400, 'bad-request', 'invalid-if-match');
    expect(expectSuccess(await calls.getTask(task.id), 200)).toMatchObject({ title: 'A task', version: task.version });
  });

  it('keeps 428 without If-Match, and 400 for a malformed one even beside an invalid body', async () => {
    const task = await calls.newTask();
    expectListedRefusal(await calls.updateTask(task.id, { title: 'x' }), 'updateTask', 428, 'precondition-required');
    expectListedRefusal(await calls.updateTask(task.id, { priority: 'URGENT' }, '*'), 'updateTask', 400, 'bad-request', 'invalid-if-match');
  });
});

describe('cursor', () => {
  const CURSOR = '#/components/parameters/Cursor/schema';
  const listTasks = (cursor: string) => client.get(`/v1/tasks?limit=1&cursor=${encodeURIComponent(cursor)}`, jsonHeaders(fx.tokens.all));

  it('admits the cursors the server issues', async () => {
    const page = expectSuccess(await client.get('/v1/tasks?limit=1', jsonHeaders(fx.tokens.all)), 200);
    expect(served.admits(CURSOR, page.nextCursor)).toBe(true);
    expect(expectSuccess(await listTasks(page.nextCursor), 200).items).toHaveLength(1);
  });

  it('answers 422 invalid-cursor, never 431, to the longest cursor the schema admits that the server did not issue', async () => {
    const { maxLength } = served.document.components.parameters.Cursor.schema;
    const forged = `${'A'.repeat(maxLength - 44)}.${'B'.repeat(43)}`;
    expect(forged).toHaveLength(maxLength);
    expect(served.admits(CURSOR, forged)).toBe(true);
    expectListedRefusal(await listTasks(forged), 'listTasks', 422, 'validation', 'invalid-cursor');
  });

  it('refuses a non-ASCII cursor by its pattern with 422 invalid-cursor (it would have grown the request head ninefold)', async () => {
    const wide = `${'é'.repeat(100)}.${'B'.repeat(43)}`;
    expect(served.admits(CURSOR, wide)).toBe(false);
    const problem = expectListedRefusal(await listTasks(wide), 'listTasks', 422, 'validation', 'invalid-cursor');
    expect(problem.errors).toEqual([{ path: '?cursor', code: 'invalid_cursor', message: expect.any(String) }]);
  });
});

describe('currency', () => {
  const CURRENCY = '#/components/schemas/CurrencyCode';

  it('is the ISO 4217 list of the currency-codes package, written in by the build; answers keep the pattern', async () => {
    const { codes } = (await import('currency-codes')).default;
    expect(served.document.components.schemas.CurrencyCode.enum).toEqual(codes());
    expect(served.document.components.schemas.CurrencyCode['x-enum-source']).toBeUndefined();
    expect(served.document.components.schemas.Deal.properties.currency).toEqual(expect.objectContaining({ pattern: '^[A-Z]{3}$' }));
  });

  it.each(['ZZZ', 'BTC'])('refuses %s on deals and contracts with 422, and stores nothing', async (code) => {
    expect(served.admits(CURRENCY, code)).toBe(false);
    const deal = expectListedRefusal(await crm.create('deal', { title: 'd', amountMinor: 1, currency: code, ownerId: 'usr_demoOwnerMara' }), 'createDeal', 422, 'validation');
    expect(deal.errors).toEqual([{ path: '/currency', code: 'invalid_enum_value', message: 'must be one of the 179 values the schema lists (AED, AFN, ALL, …)' }]);
    const existing = await crm.newDeal();
    expectListedRefusal(await crm.update('deal', existing.id, { currency: code }, String(existing.version)), 'updateDeal', 422, 'validation');
    expectListedRefusal(await contracts.create({ title: 'c', companyId: fx.crm.companyIds[0], amountMinor: 1, currency: code, expiresOn }), 'createContract', 422, 'validation');
    expect(expectSuccess(await crm.get('deal', existing.id), 200).currency).toBe('EUR');
  });

  it.each(['EUR', 'JPY', 'XAU'])('accepts %s', async (code) => {
    expect(served.admits(CURRENCY, code)).toBe(true);
    expect((await crm.newDeal({ currency: code })).currency).toBe(code);
    expect((await contracts.newContract({ amountMinor: 5, currency: code })).currency).toBe(code);
  });
});

describe('email', () => {
  const EMAIL = '#/components/schemas/ContactCreate';

  it.each(['a@example', 'a@@example.com', 'a b@example.com', 'a@-example.com', 'a@example.com.'])('refuses %s by the declared pattern, with 422', async (email) => {
    expect(served.admits(EMAIL, { name: 'n', email })).toBe(false);
    const problem = expectListedRefusal(await crm.create('contact', { name: 'n', email }), 'createContact', 422, 'validation');
    expect(problem.errors).toEqual([{ path: '/email', code: 'invalid_format', message: expect.any(String) }]);
  });

  it.each(['dana@contoso.example', "o'brien+tag@mail.example.co", 'A.B-C@x-y.example', 'x@1.io'])('accepts %s, which the pattern admits', async (email) => {
    expect(served.admits(EMAIL, { name: 'n', email })).toBe(true);
    expect((await crm.newContact({ email })).email).toBe(email);
  });
});

describe('webhook URL', () => {
  const WEBHOOK = '#/components/schemas/WebhookCreate';
  const create = (url: string, app: { client: ContractClient; fx: WorkPlatformFixture } = { client, fx }) =>
    app.client.request('POST', '/v1/webhooks', { headers: jsonHeaders(app.fx.tokens.all), body: JSON.stringify({ url, eventTypes: ['task.created'] }) });

  it('serves the https-only pattern, in openapi.json and openapi.yaml alike', async () => {
    expect(served.document.components.schemas.WebhookUrl.pattern).toBe('^https://');
    const yaml = YAML.parse((await client.get('/v1/openapi.yaml')).text);
    expect(yaml.components.schemas.WebhookUrl.pattern).toBe('^https://');
  });

  it.each(['http://hooks.example.com/in', 'http://127.0.0.1:9/in', 'ftp://hooks.example.com/'])('refuses %s by the pattern with 422', async (url) => {
    expect(served.admits(WEBHOOK, { url, eventTypes: ['task.created'] })).toBe(false);
    expectListedRefusal(await create(url), 'createWebhook', 422, 'validation');
  });

  it('accepts a public https address, and refuses an admitted private one with a listed 422', async () => {
    expect(served.admits(WEBHOOK, { url: 'https://10.0.0.1/in', eventTypes: ['task.created'] })).toBe(true);
    expectListedRefusal(await create('https://10.0.0.1/in'), 'createWebhook', 422, 'validation');
    const created = expectSuccess(await create('https://hooks.example.com/schema-rules'), 201);
    expect(created.url).toBe('https://hooks.example.com/schema-rules');
  });

  describe('on a server started with WEBHOOK_ALLOW_LOOPBACK=on', () => {
    let loopback: WorkPlatformTestApp;
    let loopbackServed: Served;
    beforeAll(async () => {
      loopback = (await startTestApp({ liftCallLimits: true, config: { webhookAllowLoopback: true } })).workPlatform;
      loopbackServed = await servedDocument(loopback);
    });
    afterAll(async () => {
      await loopback?.t.close();
    });

    it('serves documents whose pattern admits the loopback forms: openapi.json, openapi.yaml and the collection', async () => {
      const schema = loopbackServed.document.components.schemas.WebhookUrl;
      expect(schema.pattern).toBe(schema['x-loopback-pattern']);
      const yaml = YAML.parse((await loopback.client.get('/v1/openapi.yaml')).text);
      expect(yaml.components.schemas.WebhookUrl.pattern).toBe(schema['x-loopback-pattern']);
      const collection = (await loopback.client.get('/v1/postman.json')).text;
      expect(collection).not.toContain('"pattern": "^https://"');
      for (const url of ['http://127.0.0.1:8080/in', 'http://localhost/in', 'http://[::1]:3000/', 'https://hooks.example.com/']) {
        expect(loopbackServed.admits(WEBHOOK, { url, eventTypes: ['task.created'] }), url).toBe(true);
      }
      for (const url of ['http://hooks.example.com/', 'http://localhost.evil.example/', 'http://127.0.0.2/']) {
        expect(loopbackServed.admits(WEBHOOK, { url, eventTypes: ['task.created'] }), url).toBe(false);
      }
    });

    it('accepts the loopback addresses its document admits, and still refuses plain http elsewhere', async () => {
      expect(expectSuccess(await create('http://127.0.0.1:9/in', loopback), 201).url).toBe('http://127.0.0.1:9/in');
      expect(expectSuccess(await create('http://localhost:9/in', loopback), 201).url).toBe('http://localhost:9/in');
      expectProblem(await create('http://hooks.example.com/in', loopback), 422, 'validation');
    });
  });
});

describe('amountMinor with currency (dependentRequired)', () => {
  const CONTRACT_CREATE = '#/components/schemas/ContractCreate';

  it('refuses half a value on create by the schema, naming the missing member', async () => {
    const base = { title: 'c', companyId: fx.crm.companyIds[0], expiresOn };
    expect(served.admits(CONTRACT_CREATE, { ...base, amountMinor: 5 })).toBe(false);
    expect(served.admits(CONTRACT_CREATE, { ...base, currency: 'EUR' })).toBe(false);
    const missingCurrency = expectListedRefusal(await contracts.create({ ...base, amountMinor: 5 }), 'createContract', 422, 'validation');
    expect(missingCurrency.errors).toEqual([{ path: '/currency', code: 'required', message: 'is required' }]);
    const missingAmount = expectListedRefusal(await contracts.create({ ...base, currency: 'EUR' }), 'createContract', 422, 'validation');
    expect(missingAmount.errors).toEqual([{ path: '/amountMinor', code: 'required', message: 'is required' }]);
  });

  it('accepts both or neither; an admitted half (a null beside a value) is refused with a listed 422', async () => {
    const base = { title: 'c', companyId: fx.crm.companyIds[0], expiresOn };
    expect((await contracts.newContract({ amountMinor: 5, currency: 'EUR' })).amountMinor).toBe(5);
    expect((await contracts.newContract()).amountMinor).toBeNull();
    expect(served.admits(CONTRACT_CREATE, { ...base, amountMinor: 5, currency: null })).toBe(true);
    expectListedRefusal(await contracts.create({ ...base, amountMinor: 5, currency: null }), 'createContract', 422, 'validation');
  });

  it('lists the update rule, which depends on the stored contract: an admitted amountMinor alone on a contract without currency is a listed 422', async () => {
    const contract = await contracts.newContract();
    expect(served.admits('#/components/schemas/ContractUpdate', { amountMinor: 5 })).toBe(true);
    expectListedRefusal(await contracts.update(contract.id, { amountMinor: 5 }, String(contract.version)), 'updateContract', 422, 'validation');
    const priced = await contracts.newContract({ amountMinor: 5, currency: 'EUR' });
    expect(expectSuccess(await contracts.update(priced.id, { amountMinor: 7 }, String(priced.version)), 200).amountMinor).toBe(7);
  });
});

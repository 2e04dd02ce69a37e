import { describe, expect, it } from 'vitest';
import type { ContractClient } from '../support/contractClient.js';
import { crmCalls } from '../support/crm.js';
import { type TestApp, useTestApp, type WorkPlatformFixture } from '../support/testApp.js';
import { eventsAbout, expectProblem, expectSuccess } from '../support/workPlatform.js';

let t: TestApp;
let client: ContractClient;
let fx: WorkPlatformFixture;
useTestApp(({ workPlatform: app }) => ({ t, client, fx } = app), { liftCallLimits: true });
const crm = crmCalls(() => ({ t, client, fx }));

describe('POST /v1/companies', () => {
  it('answers 201 with the full company, Location and ETag, and records company.created', async () => {
    const response = await crm.create('company', { name: 'Contoso West', domain: 'west.contoso.example', description: 'New branch.' });
    const company = expectSuccess(response, 201);
    expect(company).toMatchObject({ name: 'Contoso West', domain: 'west.contoso.example', description: 'New branch.', version: 1 });
    expect(company.id).toMatch(/^cmp_[A-Za-z0-9]{20}$/);
    expect(company.updatedAt).toBe(company.createdAt);
    expect(response.headers['location']).toBe(`/v1/companies/${company.id}`);
    expect(response.headers['etag']).toBe('"1"');
    expect((await eventsAbout(t.store, company.id)).map((event) => event.type)).toEqual(['company.created']);
  });

  it('defaults domain and description to null', async () => {
    expect(await crm.newCompany({ name: 'Bare' })).toMatchObject({ name: 'Bare', domain: null, description: null });
  });

  it('answers 422 without a name, with an empty one, or with unknown members', async () => {
    for (const body of [{}, { name: '' }, { name: 'x', industry: 'toys' }]) {
      expectProblem(await crm.create('company', body), 422, 'validation');
    }
  });

  it('answers 400 value-too-long beyond the storage limits and stores nothing', async () => {
    const before = (await t.sql.value<number>('SELECT count(*) AS n FROM companies'));
    expectProblem(await crm.create('company', { name: 'n'.repeat(201) }), 400, 'bad-request', 'value-too-long');
    expectProblem(await crm.create('company', { name: 'ok', description: 'd'.repeat(2001) }), 400, 'bad-request', 'value-too-long');
    expectProblem(await crm.create('company', { name: 'ok', domain: `${'d'.repeat(250)}.com` }), 400, 'bad-request', 'value-too-long');
    expect((await t.sql.value<number>('SELECT count(*) AS n FROM companies'))).toBe(before);
    expectSuccess(await crm.create('company', { name: '😀'.repeat(200) }), 201);
  });

  it('replays the same answer for the same Idempotency-Key', async () => {
    const first = expectSuccess(await crm.create('company', { name: 'Once' }, { 'idempotency-key': 'crm-company-once' }), 201);
    const again = await crm.create('company', { name: 'Once' }, { 'idempotency-key': 'crm-company-once' });
    expect(expectSuccess(again, 201)).toEqual(first);
    expect(again.headers['idempotent-replayed']).toBe('true');
  });
});

import { describe, expect, it } from 'vitest';
import type { ContractClient } from '../support/contractClient.js';
import { contractCalls, dayAfter } from '../support/contracts.js';
import { crmCalls } from '../support/crm.js';
import { type TestApp, useTestApp, type WorkPlatformFixture } from '../support/testApp.js';
import { eventsAbout, expectProblem, expectSuccess } from '../support/workPlatform.js';

let t: TestApp;
let client: ContractClient;
let fx: WorkPlatformFixture;
useTestApp(({ workPlatform: app }) => ({ t, client, fx } = app), { liftCallLimits: true });
const contracts = contractCalls(() => ({ t, client, fx }));
const crm = crmCalls(() => ({ t, client, fx }));
const expiresOn = dayAfter(Date.now(), 30);
const countContracts = () => t.sql.value<number>('SELECT count(*) AS n FROM contracts');

describe('POST /v1/contracts', () => {
  it('answers 201 with a draft, Location and ETag, and records contract.created', async () => {
    const company = await crm.newCompany();
    const response = await contracts.create({ title: 'Licence', companyId: company.id, amountMinor: 1_250_000, currency: 'EUR', body: 'Terms.', expiresOn });
    const contract = expectSuccess(response, 201);
    expect(contract).toEqual({
      id: expect.stringMatching(/^ctr_[A-Za-z0-9]{20}$/),
      title: 'Licence', status: 'draft', companyId: company.id, dealId: null, amountMinor: 1_250_000, currency: 'EUR', body: 'Terms.', expiresOn,
      sentAt: null, signedAt: null, declinedAt: null, expiredAt: null, version: 1, createdAt: contract.createdAt, updatedAt: contract.createdAt,
    });
    expect(response.headers['location']).toBe(`/v1/contracts/${contract.id}`);
    expect(response.headers['etag']).toBe('"1"');
    const events = await eventsAbout(t.store, contract.id);
    expect(events.map((event) => event.type)).toEqual(['contract.created']);
    expect(events[0]!.payload.data.object).toEqual(contract);
  });

  it("takes the company from the deal when only dealId is given, and keeps it null when the deal has none", async () => {
    const company = await crm.newCompany();
    const deal = await crm.newDeal({ companyId: company.id });
    expect(await contracts.newContract({ companyId: undefined, dealId: deal.id })).toMatchObject({ companyId: company.id, dealId: deal.id });
    const bare = await crm.newDeal();
    expect(await contracts.newContract({ companyId: undefined, dealId: bare.id })).toMatchObject({ companyId: null, dealId: bare.id });
    expect(await contracts.newContract({ companyId: company.id, dealId: bare.id })).toMatchObject({ companyId: company.id, dealId: bare.id });
  });

  it('answers 422 without a company or deal, with a company other than the deal\u2019s, with half a value; and stores nothing', async () => {
    const [company, other] = [await crm.newCompany(), await crm.newCompany()];
    const deal = await crm.newDeal({ companyId: company.id });
    const before = await countContracts();
    expect(expectProblem(await contracts.create({ title: 'x', expiresOn }), 422, 'validation').errors[0].path).toBe('/companyId');
    expect(expectProblem(await contracts.create({ title: 'x', companyId: null, dealId: null, expiresOn }), 422, 'validation').errors[0].path).toBe('/companyId');
    expect(expectProblem(await contracts.create({ title: 'x', companyId: other.id, dealId: deal.id, expiresOn }), 422, 'validation').errors[0].path).toBe('/companyId');
    expect(expectProblem(await contracts.create({ title: 'x', companyId: company.id, amountMinor: 5, expiresOn }), 422, 'validation').errors[0].path).toBe('/currency');
    expect(expectProblem(await contracts.create({ title: 'x', companyId: company.id, currency: 'EUR', expiresOn }), 422, 'validation').errors[0].path).toBe('/amountMinor');
    for (const change of [{ expiresOn: '2026-02-30' }, { expiresOn: undefined }, { title: '' }, { currency: 'eur', amountMinor: 1 }, { amountMinor: -1, currency: 'EUR' }, { status: 'sent' }]) {
      expectProblem(await contracts.create({ title: 'x', companyId: company.id, expiresOn, ...change }), 422, 'validation');
    }
    expectProblem(await contracts.create({ title: 't'.repeat(201), companyId: company.id, expiresOn }), 400, 'bad-request', 'value-too-long');
    expectProblem(await contracts.create({ title: 'x', body: 'b'.repeat(20_001), companyId: company.id, expiresOn }), 400, 'bad-request', 'value-too-long');
    expect(await countContracts()).toBe(before);
  });

  it("answers 404 for a company or deal of another workspace", async () => {
    const before = await countContracts();
    expectProblem(await contracts.create({ title: 'x', companyId: fx.otherWorkspace.companyId, expiresOn }), 404, 'not-found', 'company-not-found');
    expectProblem(await contracts.create({ title: 'x', dealId: fx.otherWorkspace.dealId, expiresOn }), 404, 'not-found', 'deal-not-found');
    expect(await countContracts()).toBe(before);
  });

  it('replays the first answer to a repeated Idempotency-Key and creates one contract', async () => {
    const body = { title: 'Once', companyId: fx.crm.companyIds[0], expiresOn };
    const first = await contracts.create(body, { 'idempotency-key': 'contract-create-1' });
    const again = await contracts.create(body, { 'idempotency-key': 'contract-create-1' });
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect((await eventsAbout(t.store, first.body.id)).map((event) => event.type)).toEqual(['contract.created']);
  });
});

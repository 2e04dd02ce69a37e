import { describe, expect, it } from 'vitest';
import type { ContractClient } from '../support/contractClient.js';
import { contractCalls, dayAfter } from '../support/contracts.js';
import type { TestApp } from '../support/testApp.js';
import { eventsAbout, expectProblem, expectSuccess, makePat } from '../support/workPlatform.js';
import { useWorkPlatformTestApp, type WorkPlatformFixture } from '../support/workPlatformApp.js';

let clock = Date.now();
let t: TestApp;
let client: ContractClient;
let fx: WorkPlatformFixture;
useWorkPlatformTestApp((app) => ({ t, client, fx } = app), { now: () => clock });
const contracts = contractCalls(() => ({ t, client, fx }), () => clock);

describe('POST /v1/contracts/{contractId}/send', () => {
  it('moves a draft to sent, sets sentAt, bumps the version and records contract.sent', async () => {
    const draft = await contracts.newContract();
    clock += 60_000;
    const response = await contracts.move(draft.id, 'send');
    const sent = expectSuccess(response, 200);
    expect(sent).toMatchObject({ status: 'sent', sentAt: new Date(clock).toISOString(), updatedAt: new Date(clock).toISOString(), version: 2 });
    expect(response.headers['etag']).toBe('"2"');
    const events = eventsAbout(t.db, draft.id);
    expect(events.map((event) => event.type)).toEqual(['contract.created', 'contract.sent']);
    expect(events[1]!.payload.data.object).toEqual(sent);
  });

  it('answers 409 with the code of each status that cannot be sent, and changes nothing', async () => {
    const cases: [Parameters<typeof contracts.contractIn>[0], string][] = [
      [['send'], 'contract-already-sent'],
      [['send', 'sign'], 'contract-already-signed'],
      [['send', 'decline'], 'contract-already-declined'],
    ];
    for (const [moves, code] of cases) {
      const contract = await contracts.contractIn(moves);
      expectProblem(await contracts.move(contract.id, 'send'), 409, 'conflict', code);
      expect(expectSuccess(await contracts.get(contract.id), 200)).toEqual(contract);
    }
  });

  it('answers 409 contract-expired to an expired contract and contract-expiry-passed to a draft whose day has passed', async () => {
    const start = clock;
    const overdue = await contracts.contractIn(['send'], { expiresOn: dayAfter(clock, 1) });
    const lateDraft = await contracts.newContract({ expiresOn: dayAfter(clock, 1) });
    clock += 3 * 86_400_000;
    expectProblem(await contracts.move(overdue.id, 'send'), 409, 'conflict', 'contract-expired');
    expectProblem(await contracts.move(lateDraft.id, 'send'), 409, 'conflict', 'contract-expiry-passed');
    // Its expiresOn changed, the draft can go out.
    const moved = expectSuccess(await contracts.update(lateDraft.id, { expiresOn: dayAfter(clock, 0) }, '1'), 200);
    expect(expectSuccess(await contracts.move(lateDraft.id, 'send', { 'if-match': String(moved.version) }), 200).status).toBe('sent');
    clock = start;
  });

  it('checks If-Match when sent, and replays a repeated Idempotency-Key instead of answering 409', async () => {
    const draft = await contracts.newContract();
    expectProblem(await contracts.move(draft.id, 'send', { 'if-match': '"7"' }), 409, 'conflict', 'version-conflict');
    expectProblem(await contracts.move(draft.id, 'send', { 'if-match': 'W/"1"' }), 400, 'bad-request', 'invalid-if-match');
    const first = await contracts.move(draft.id, 'send', { 'if-match': '"1"', 'idempotency-key': 'send-once' });
    const again = await contracts.move(draft.id, 'send', { 'if-match': '"1"', 'idempotency-key': 'send-once' });
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(eventsAbout(t.db, draft.id).map((event) => event.type)).toEqual(['contract.created', 'contract.sent']);
    expectProblem(await contracts.move(draft.id, 'send'), 409, 'conflict', 'contract-already-sent');
  });

  it("answers 404 for another workspace's contract and 403 to a read-only token", async () => {
    expectProblem(await contracts.move(fx.otherWorkspace.contractId, 'send'), 404, 'not-found', 'contract-not-found');
    expectProblem(await contracts.move('ctr_ZZZZZZZZZZZZZZZZZZZZ', 'send'), 404, 'not-found', 'contract-not-found');
    const draft = await contracts.newContract();
    expectProblem(await contracts.move(draft.id, 'send', {}, makePat(t.db, fx.workspaceId, ['contracts:read'])), 403, 'insufficient-scope');
  });
});

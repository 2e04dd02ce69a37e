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

describe('POST /v1/contracts/{contractId}/decline', () => {
  it('moves a sent contract to declined, sets declinedAt and records contract.declined', async () => {
    const sent = await contracts.contractIn(['send']);
    clock += 60_000;
    const response = await contracts.move(sent.id, 'decline');
    const moved = expectSuccess(response, 200);
    expect(moved).toMatchObject({ status: 'declined', declinedAt: new Date(clock).toISOString(), signedAt: null, updatedAt: new Date(clock).toISOString(), version: 3 });
    expect(response.headers['etag']).toBe('"3"');
    const events = eventsAbout(t.db, sent.id);
    expect(events.map((event) => event.type)).toEqual(['contract.created', 'contract.sent', 'contract.declined']);
    expect(events[2]!.payload.data.object).toEqual(moved);
    expect(events[2]!.payload.actor).toEqual({ id: 'usr_demoOwnerMara', kind: 'USER' });
  });

  it('answers 409 with the code of each status that is not sent, and changes nothing', async () => {
    const cases: [Parameters<typeof contracts.contractIn>[0], string][] = [
      [[], 'contract-not-sent'],
      [['send', 'sign'], 'contract-already-signed'],
      [['send', 'decline'], 'contract-already-declined'],
      [['send', 'withdraw'], 'contract-not-sent'],
    ];
    for (const [moves, code] of cases) {
      const contract = await contracts.contractIn(moves);
      expectProblem(await contracts.move(contract.id, 'decline'), 409, 'conflict', code);
      expect(expectSuccess(await contracts.get(contract.id), 200)).toEqual(contract);
    }
  });

  it('answers 409 contract-expired from the start of the day after expiresOn (UTC), and not before', async () => {
    const start = clock;
    const sent = await contracts.contractIn(['send'], { expiresOn: dayAfter(clock, 2) });
    const lastMoment = Date.parse(`${dayAfter(start, 3)}T00:00:00.000Z`) - 1;
    const other = await contracts.contractIn(['send'], { expiresOn: dayAfter(clock, 2) });
    clock = lastMoment;
    expect(expectSuccess(await contracts.get(other.id), 200).status).toBe('sent');
    clock = lastMoment + 1;
    const problem = expectProblem(await contracts.move(sent.id, 'decline'), 409, 'conflict', 'contract-expired');
    expect(problem.detail).toContain('expired');
    // The refusal changed nothing: the read shows the expiry, which the sweep records.
    expect(expectSuccess(await contracts.get(sent.id), 200)).toMatchObject({ status: 'expired', version: 3, expiredAt: new Date(lastMoment + 1).toISOString() });
    expect(eventsAbout(t.db, sent.id).map((event) => event.type)).toEqual(['contract.created', 'contract.sent']);
    clock = start;
  });

  it('checks If-Match when sent, and replays a repeated Idempotency-Key instead of answering 409', async () => {
    const sent = await contracts.contractIn(['send']);
    expectProblem(await contracts.move(sent.id, 'decline', { 'if-match': '1' }), 409, 'conflict', 'version-conflict');
    const first = await contracts.move(sent.id, 'decline', { 'if-match': '2', 'idempotency-key': 'decline-once' });
    const again = await contracts.move(sent.id, 'decline', { 'if-match': '2', 'idempotency-key': 'decline-once' });
    expect(first.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(eventsAbout(t.db, sent.id).map((event) => event.type)).toEqual(['contract.created', 'contract.sent', 'contract.declined']);
  });

  it("answers 404 for another workspace's contract and 403 to a read-only token", async () => {
    expectProblem(await contracts.move(fx.otherWorkspace.contractId, 'decline'), 404, 'not-found', 'contract-not-found');
    const sent = await contracts.contractIn(['send']);
    expectProblem(await contracts.move(sent.id, 'decline', {}, makePat(t.db, fx.workspaceId, ['contracts:read'])), 403, 'insufficient-scope');
    expectProblem(await contracts.move(sent.id, 'decline', {}, makePat(t.db, fx.workspaceId, ['crm:write'])), 403, 'insufficient-scope');
  });
});

// Contract calls of the operation suites, as the demo owner's all-scope PAT unless a token is given.
// `app` is read at each call, so they can be made before the app starts. Also the set-up of the
// contract suites and the cases every lifecycle move (send, sign, decline, withdraw) shares.
import { expect, it } from 'vitest';
import { eventsAbout, expectProblem, expectSuccess } from './workPlatform.js';
import { ownerRequests } from './workPlatformApp.js';
import { useTestApp, type WorkPlatformTestApp } from './testApp.js';

export type ContractMoveName = 'send' | 'sign' | 'decline' | 'withdraw';

/** A calendar day `days` after the instant `at` (UTC), as `YYYY-MM-DD`. */
export function dayAfter(at: number, days: number): string {
  return new Date(at + days * 86_400_000).toISOString().slice(0, 10);
}

/** `now` is the app's clock (a test that injects one passes it), for the expiry days of new contracts. */
export function contractCalls(app: () => WorkPlatformTestApp, now: () => number = Date.now) {
  const { send, ifMatch } = ownerRequests(app);
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

export type ContractCalls = ReturnType<typeof contractCalls>;

export interface ContractSuite {
  /** The app's clock. A test that moves `at` puts it back before it ends. */
  clock: { at: number };
  /** The running app (it starts in the file's `beforeAll`). */
  app: () => WorkPlatformTestApp;
  /** The contract calls, new contracts expiring by `clock`. */
  contracts: ContractCalls;
}

/**
 * The set-up of a contract operation suite: the /v1 test app on a clock the tests move, and the
 * contract calls. `use` receives the app once it has started, for files that keep `t` and `fx` at hand.
 */
export function useContractSuite(use: (app: WorkPlatformTestApp) => unknown = () => undefined): ContractSuite {
  const clock = { at: Date.now() };
  let started: WorkPlatformTestApp | undefined;
  const app = () => {
    if (!started) throw new Error('the contract suite app starts in beforeAll');
    return started;
  };
  useTestApp(
    ({ workPlatform: running }) => {
      started = running;
      return use(running);
    },
    { liftCallLimits: true, now: () => clock.at },
  );
  return { clock, app, contracts: contractCalls(app, () => clock.at) };
}

const eventOfMove: Record<ContractMoveName, string> = {
  send: 'contract.sent',
  sign: 'contract.signed',
  decline: 'contract.declined',
  withdraw: 'contract.withdrawn',
};

export interface ContractMove {
  move: ContractMoveName;
  /** The status the move takes a contract from: a draft (send) or a sent contract (sign, decline, withdraw). */
  from: 'draft' | 'sent';
  /** The status it leaves the contract in. */
  to: 'sent' | 'signed' | 'declined' | 'draft';
  /** The members the move sets besides status, version and updatedAt, given the contract before it and the move's time. */
  sets: (before: any, at: string) => Record<string, unknown>;
  /** The 409 code for each status the move refuses, keyed by the moves from draft that reach that status. */
  refusals: [ContractMoveName[], string][];
}

/**
 * Registers, in the caller's `describe`, the cases every lifecycle move of a contract shares: the
 * move itself (members, version, ETag, its event and actor), a 409 from each status it refuses,
 * If-Match and a replayed Idempotency-Key (one at a time and ten at once), 404 and 403; and, for a move from sent, the refusal
 * from the first moment after the expiry day (a draft does not expire: sendContract tests its own
 * expiry cases). The move's own file adds what only it does.
 */
export function registerContractMoveCases(suite: ContractSuite, spec: ContractMove): void {
  const { clock, app, contracts } = suite;
  const { move, refusals } = spec;
  const reachFrom: ContractMoveName[] = spec.from === 'sent' ? ['send'] : [];
  const eventsUpToMove = ['contract.created', ...reachFrom.map((step) => eventOfMove[step]), eventOfMove[move]];
  /** Created at version 1, each move adds one. */
  const versionAfterMove = reachFrom.length + 2;
  const refusalOnceMoved = refusals.find(([moves]) => moves.join() === [...reachFrom, move].join())?.[1];
  if (refusalOnceMoved === undefined) throw new Error(`${move}: refusals must name the code for a contract moved by ${[...reachFrom, move].join(', ')}`);

  it(`moves a ${spec.from} contract to ${spec.to}, bumps the version and records ${eventOfMove[move]}`, async () => {
    const before = await contracts.contractIn(reachFrom);
    clock.at += 60_000;
    const at = new Date(clock.at).toISOString();
    const response = await contracts.move(before.id, move);
    const moved = expectSuccess(response, 200);
    expect(moved).toMatchObject({ status: spec.to, ...spec.sets(before, at), updatedAt: at, version: versionAfterMove });
    expect(response.headers['etag']).toBe(`"${versionAfterMove}"`);
    const events = await eventsAbout(app().t.store, before.id);
    expect(events.map((event) => event.type)).toEqual(eventsUpToMove);
    expect(events.at(-1)!.payload.data.object).toEqual(moved);
    expect(events.at(-1)!.payload.actor).toEqual({ id: 'usr_demoOwnerMara', kind: 'USER' });
  });

  it(`answers 409 with the code of each status it cannot ${move} from, and changes nothing`, async () => {
    for (const [moves, code] of refusals) {
      const contract = await contracts.contractIn(moves);
      expectProblem(await contracts.move(contract.id, move), 409, 'conflict', code);
      expect(expectSuccess(await contracts.get(contract.id), 200)).toEqual(contract);
    }
  });

  if (spec.from === 'sent') {
    it('answers 409 contract-expired from the start of the day after expiresOn (UTC), and not before', async () => {
      const start = clock.at;
      const sent = await contracts.contractIn(['send'], { expiresOn: dayAfter(clock.at, 2) });
      const lastMoment = Date.parse(`${dayAfter(start, 3)}T00:00:00.000Z`) - 1;
      const other = await contracts.contractIn(['send'], { expiresOn: dayAfter(clock.at, 2) });
      clock.at = lastMoment;
      expect(expectSuccess(await contracts.get(other.id), 200).status).toBe('sent');
      clock.at = lastMoment + 1;
      const problem = expectProblem(await contracts.move(sent.id, move), 409, 'conflict', 'contract-expired');
      expect(problem.detail).toContain('expired');
      // The refusal changed nothing: the read shows the expiry, which the sweep records.
      expect(expectSuccess(await contracts.get(sent.id), 200)).toMatchObject({ status: 'expired', version: 3, expiredAt: new Date(lastMoment + 1).toISOString() });
      // The refusal recorded no event; the sweep, running on its own timer, may have recorded the expiry meanwhile (once).
      const recorded = (await eventsAbout(app().t.store, sent.id)).map((event) => event.type);
      expect(recorded.filter((type) => type !== 'contract.expired')).toEqual(['contract.created', 'contract.sent']);
      expect(recorded.filter((type) => type === 'contract.expired').length).toBeLessThanOrEqual(1);
      clock.at = start;
    });
  }

  it('checks If-Match when sent, and replays a repeated Idempotency-Key instead of answering 409', async () => {
    const before = await contracts.contractIn(reachFrom);
    const version = before.version as number;
    expectProblem(await contracts.move(before.id, move, { 'if-match': `"${version + 6}"` }), 409, 'conflict', 'version-conflict');
    expectProblem(await contracts.move(before.id, move, { 'if-match': String(version - 1) }), 409, 'conflict', 'version-conflict');
    expectProblem(await contracts.move(before.id, move, { 'if-match': `W/"${version}"` }), 400, 'bad-request', 'invalid-if-match');
    const once = { 'if-match': String(version), 'idempotency-key': `${move}-once` };
    const first = await contracts.move(before.id, move, once);
    const again = await contracts.move(before.id, move, once);
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect((await eventsAbout(app().t.store, before.id)).map((event) => event.type)).toEqual(eventsUpToMove);
    expectProblem(await contracts.move(before.id, move), 409, 'conflict', refusalOnceMoved);
  });

  it('answers ten concurrent repeats of one Idempotency-Key (with If-Match) with the first 200, moving the contract once', async () => {
    const before = await contracts.contractIn(reachFrom);
    const once = { 'if-match': String(before.version), 'idempotency-key': `${move}-at-once` };
    // On PostgreSQL all ten may act at once; those the first one's move refuses (409) replay its answer.
    const answers = await Promise.all(Array.from({ length: 10 }, () => contracts.move(before.id, move, once)));
    expect(answers.map((answer) => answer.status)).toEqual(Array(10).fill(200));
    expect(new Set(answers.map((answer) => JSON.stringify(answer.body))).size).toBe(1);
    expect(answers.filter((answer) => answer.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
    expect(answers[0]!.body.version).toBe(versionAfterMove);
    expect((await eventsAbout(app().t.store, before.id)).map((event) => event.type)).toEqual(eventsUpToMove);
  });

  it("answers 404 for another workspace's contract and for a missing one", async () => {
    const { fx } = app();
    expectProblem(await contracts.move(fx.otherWorkspace.contractId, move), 404, 'not-found', 'contract-not-found');
    expectProblem(await contracts.move('ctr_ZZZZZZZZZZZZZZZZZZZZ', move), 404, 'not-found', 'contract-not-found');
  });
}

// The PostgreSQL engine's commit announcements (a NOTIFY after the COMMIT) and its listening
// connection (LISTEN outside the pool, made again when lost): how webhook workers of every
// process learn of deliveries queued anywhere.
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { tenants } from '../../../db/schema.js';
import { postgresEngine, type StoreEngine } from '../../../src/store/engine.js';
import { openPostgres } from '../../../src/store/postgres.js';
import { sharedPostgresServer, withClient } from '../../support/postgresServer.js';
import { waitFor } from '../../webhooks/deliveryFixtures.js';

const channel = 'test_announcements';
const closing: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closing.splice(0).reverse()) await close();
});

async function twoInstances(): Promise<{ url: string; first: StoreEngine; second: StoreEngine }> {
  const url = await (await sharedPostgresServer()).createDatabase({ migrated: true });
  const [first, second] = await Promise.all(
    [1, 2].map(async () => {
      const engine = postgresEngine((await openPostgres(url, { poolMax: 2 })).pool, { relistenDelayMs: 10 });
      closing.push(() => engine.close());
      return engine;
    }),
  );
  return { url, first: first!, second: second! };
}

describe('announceCommit and listen on PostgreSQL', () => {
  it('announces a commit once, however often a change asked, and never a rolled-back change', async () => {
    const { url, first } = await twoInstances();
    // A plain client that sees every notification with its payload, in commit order.
    const observer = new pg.Client({ connectionString: url });
    await observer.connect();
    closing.push(() => observer.end());
    const payloads: string[] = [];
    observer.on('notification', (message) => payloads.push(message.payload ?? ''));
    await observer.query(`LISTEN ${channel}`);

    await expect(
      first.write(async () => {
        first.announceCommit(channel);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    await first.write(async () => {
      first.announceCommit(channel);
      await first.statement(first.orm.insert(tenants).values({ id: 'ten_1', name: 'One', createdAt: 1 })).run({});
      first.announceCommit(channel);
    });
    // The NOTIFY follows the COMMIT on another connection: wait for it, then fence. Notifications
    // arrive in commit order, so what came before the fence is all there is.
    await waitFor(() => payloads.length === 1, 'the announcement', 10_000);
    await observer.query(`NOTIFY ${channel}, 'fence'`);
    await waitFor(() => payloads.includes('fence'), 'the fence', 10_000);
    expect(payloads).toEqual(['', 'fence']);
    expect(() => first.announceCommit('Not a channel; DROP TABLE tenants')).toThrow(/not a channel name/);
  });

  it("calls a listener at another instance's announcement, and once more after its lost connection is made again", async () => {
    const { url, first, second } = await twoInstances();
    let calls = 0;
    const stop = await second.listen(channel, () => (calls += 1));
    const listeningBackends = () =>
      withClient(url, async (admin) => (await admin.query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN ${channel}'`)).rows.map((row) => row.pid));

    first.announceCommit(channel);
    await waitFor(() => calls === 1, 'the first announcement', 10_000);

    const [listener] = await listeningBackends();
    expect(listener).toBeDefined();
    await withClient(url, (admin) => admin.query('SELECT pg_terminate_backend($1)', [listener]));
    // Made again: the listener is called once, as announcements may have been missed meanwhile.
    await waitFor(() => calls === 2, 'the call after listening again', 10_000);
    await waitFor(async () => (await listeningBackends()).some((pid) => pid !== listener), 'a new listening connection', 10_000);

    first.announceCommit(channel);
    await waitFor(() => calls === 3, 'an announcement on the new connection', 10_000);

    await stop();
    await waitFor(async () => (await listeningBackends()).length === 0, 'the listening connection to close', 10_000);
  });
});


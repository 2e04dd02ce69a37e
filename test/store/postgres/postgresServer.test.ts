import { describe, expect, it } from 'vitest';
import { sharedPostgresServer, withClient } from '../../support/postgresServer.js';

describe('the test run\'s PostgreSQL server', () => {
  it('is a real PostgreSQL 15 or later, reached over TCP as the superuser app', async () => {
    const server = await sharedPostgresServer();
    const { rows } = await withClient(server.url, (client) => client.query<{ version: number; user: string }>("SELECT current_setting('server_version_num')::int AS version, current_user AS user"));
    expect(rows[0]!.version).toBeGreaterThanOrEqual(150000);
    expect(rows[0]!.user).toBe('app');
    expect(server.url).toMatch(/^postgres:\/\/app@127\.0\.0\.1:\d+\/postgres$/);
  });

  it('gives each caller a database of its own, empty or cloned from a template', async () => {
    const server = await sharedPostgresServer();
    const first = await server.createDatabase();
    const second = await server.createDatabase();
    expect(first).not.toBe(second);
    await withClient(first, (client) => client.query("CREATE TABLE marks (name text); INSERT INTO marks VALUES ('first')"));
    const tables = await withClient(second, (client) => client.query("SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'"));
    expect(tables.rows[0]!.n).toBe(0);

    const template = new URL(first).pathname.slice(1);
    const clone = await server.createDatabase({ template });
    const marks = await withClient(clone, (client) => client.query<{ name: string }>('SELECT name FROM marks'));
    expect(marks.rows).toEqual([{ name: 'first' }]);
  });

  it('is one server for every caller of the run', async () => {
    const [a, b] = await Promise.all([sharedPostgresServer(), sharedPostgresServer()]);
    expect(a.url).toBe(b.url);
  });
});

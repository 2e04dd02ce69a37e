import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ContractClient } from './support/contractClient.js';
import { startServerProcess, waitForOutput } from './support/serverProcess.js';

const dataDir = mkdtempSync(path.join(tmpdir(), 'contract-api-start-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('npm start on an empty database', () => {
  it('migrates, loads the demo data, prints the URLs and a working demo key, and stops cleanly on SIGINT', async () => {
    const server = await startServerProcess({ DATABASE_PATH: path.join(dataDir, 'fresh.db'), LOG_REQUESTS: 'on' });
    const { child, url } = server;
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const key = (await waitForOutput(server, /"apiKey": "(pfk_[A-Za-z0-9_-]{43})"/))[1]!;
    let output = server.output();
    expect(output).toContain('/api/v1/openapi.json');
    expect(output).toContain('/api/v1/postman.json');
    expect(output).toContain('webhook delivery worker: running in this process');
    expect(output).not.toContain('WEBHOOK_ALLOW_LOOPBACK is on');
    // The demo subscription is named, its signing secret never printed.
    expect(output).toMatch(/Demo webhook subscription whk_[A-Za-z0-9]+ → https:\/\//);
    expect(output).not.toMatch(/whsec_/);
    // Only the main demo key is printed.
    expect(output.match(/pfk_[A-Za-z0-9_-]{43}/g)!.every((printed) => printed === key)).toBe(true);

    const response = await new ContractClient(url).get('/api/v1/portfolio', { authorization: `Bearer ${key}` });
    expect(response.status).toBe(200);
    // The demo OAuth client is named with where to start the flow.
    expect(output).toMatch(/Demo OAuth 2\.0 client ocl_demoNorthwindCli \(public, PKCE; redirect URI http:\/\/127\.0\.0\.1:8976\/callback\)/);
    const metadata = await fetch(`${url}/.well-known/oauth-authorization-server`);
    expect(metadata.status).toBe(200);
    expect((await metadata.json()).code_challenge_methods_supported).toEqual(['S256']);
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    output = server.output();
    expect(output).toContain('Stopped.');
    const requestLog = output.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line));
    expect(requestLog).toContainEqual(expect.objectContaining({ msg: 'request', path: '/api/v1/portfolio', status: 200 }));
    expect(output).not.toContain(`"authorization"`);
  });
});

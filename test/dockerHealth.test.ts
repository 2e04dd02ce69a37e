// No Docker engine runs here: the Dockerfile's and compose.yaml's health checks are read, checked
// against the probes (docs/operations.md, "Health and drain") and the ports the processes listen on, and the
// image's own health check command is run with node against a real server.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { startTestApp, type TestApp } from './support/testApp.js';

const dockerfile = readFileSync(new URL('../Dockerfile', import.meta.url), 'utf8');
const compose = YAML.parse(readFileSync(new URL('../compose.yaml', import.meta.url), 'utf8'), { merge: true }) as {
  services: Record<
    string,
    {
      build?: string;
      environment?: Record<string, string>;
      healthcheck?: { test?: string[]; disable?: boolean };
      depends_on?: Record<string, { condition: string }>;
      ports?: string[];
    }
  >;
};

/** The Dockerfile's instructions, continuation lines joined, comments dropped. */
function instructions(text: string): string[] {
  return text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

/** The runtime stage's HEALTHCHECK as its exec-form command. */
function imageHealthCheck(): string[] {
  const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
  const found = instructions(runtime).filter((line) => line.startsWith('HEALTHCHECK '));
  expect(found).toHaveLength(1);
  const command = /\bCMD (\[.*\])$/.exec(found[0]!)?.[1];
  expect(command, 'exec form: no shell in the way').toBeDefined();
  return JSON.parse(command!) as string[];
}

/** The URL a `node -e "fetch(...)"` health check asks, with `${process.env.NAME || default}` read from `env`. */
function fetchedUrl(command: string[], env: Record<string, string | undefined> = {}): URL {
  expect(command.slice(0, 2)).toEqual(['node', '-e']);
  const script = command[2]!;
  const literal = /fetch\(([`'])(.*?)\1\)/.exec(script)?.[2];
  expect(literal, script).toBeDefined();
  return new URL(literal!.replace(/\$\{process\.env\.(\w+) \|\| (\w+)\}/g, (_, name: string, fallback: string) => env[name] || fallback));
}

describe('Dockerfile', () => {
  it('checks the API server with /readyz on the port it listens on', () => {
    const url = fetchedUrl(imageHealthCheck());
    expect(url.pathname).toBe('/readyz');
    expect(url.hostname).toBe('127.0.0.1');
    expect(instructions(dockerfile)).toContain(`EXPOSE ${url.port}`);
    expect(fetchedUrl(imageHealthCheck(), { PORT: '8080' }).port).toBe('8080');
  });

  describe('its health check command, run by node', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp();
    });
    afterAll(async () => {
      await t?.close();
    });
    /** Its exit code; asynchronously, as the server answers from this process. */
    const run = () =>
      new Promise<number | null>((resolve) => {
        const [command, ...args] = imageHealthCheck();
        const child = execFile(command === 'node' ? process.execPath : command!, args, { env: { ...process.env, PORT: new URL(t.app.url).port }, timeout: 20_000 });
        child.once('exit', (code) => resolve(code));
      });

    it('succeeds while the server is ready and fails from the start of its shutdown', async () => {
      expect(await run()).toBe(0);
      t.app.markShuttingDown();
      expect(await run()).toBe(1);
    });
  });
});

describe('compose.yaml', () => {
  const { services } = compose;

  it('checks the API servers with /readyz on the port they publish', () => {
    const api = services.api!;
    const url = fetchedUrl(api.healthcheck!.test!.slice(1));
    expect(api.healthcheck!.test![0]).toBe('CMD');
    expect(url.pathname).toBe('/readyz');
    expect(api.ports!.map((mapping) => mapping.split(':').at(-1))).toEqual([url.port]);
    expect(api.environment?.PORT ?? '3000').toBe(url.port);
  });

  it('checks each worker with /livez on its WORKER_HEALTH_PORT', () => {
    const worker = services.worker!;
    expect(worker.healthcheck?.disable).not.toBe(true);
    const url = fetchedUrl(worker.healthcheck!.test!.slice(1));
    expect(url.pathname).toBe('/livez');
    expect(worker.environment?.WORKER_HEALTH_PORT).toBe(url.port);
  });

  it('waits only on services with a health check of their own (condition: service_healthy)', () => {
    const conditions = Object.entries(services).flatMap(([name, service]) =>
      Object.entries(service.depends_on ?? {}).map(([target, { condition }]) => ({ name, target, condition })),
    );
    expect(conditions.length).toBeGreaterThan(0);
    for (const { name, target, condition } of conditions) {
      expect(services[target], `${name} depends on ${target}`).toBeDefined();
      if (condition !== 'service_healthy') continue;
      const check = services[target]!.healthcheck;
      const imageChecks = services[target]!.build !== undefined && !check?.disable;
      expect(Boolean(check?.test) || imageChecks, `${name} waits for ${target} to be healthy`).toBe(true);
    }
  });

  it('runs no service on the image health check of a process it does not run', () => {
    for (const [name, service] of Object.entries(services)) {
      if (service.build === undefined || name === 'api') continue;
      expect(service.healthcheck?.disable === true || service.healthcheck?.test !== undefined, name).toBe(true);
    }
  });
});

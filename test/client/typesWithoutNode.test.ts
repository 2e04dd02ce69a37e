// The client package's declarations compile in a consumer without @types/node (a browser or an edge runtime): no
// Buffer, NodeJS.* or `node:` type leaks into them. Built into a folder of this test's own, then compiled as such a
// consumer would: `types: []`, DOM and ES libraries, every declaration checked (skipLibCheck off).
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const repoRoot = path.resolve(import.meta.dirname, '../..');
const tsc = path.join(repoRoot, 'node_modules/typescript/bin/tsc');
const run = promisify(execFile);
let folder: string;

beforeAll(async () => {
  // Inside the project (git-ignored): the declarations find openapi-fetch in node_modules by walking up, as they do from dist/.
  mkdirSync(path.join(repoRoot, '.scratch-builds'), { recursive: true });
  folder = mkdtempSync(path.join(repoRoot, '.scratch-builds', 'client-types-'));
  await run(process.execPath, [tsc, '-p', path.join(repoRoot, 'src/client/tsconfig.json'), '--outDir', path.join(folder, 'dist')], { cwd: repoRoot });
}, 120_000);
afterAll(() => {
  if (folder) rmSync(folder, { recursive: true, force: true });
});

function declarationFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.d.ts'))
    .map((entry) => path.join(entry.parentPath, entry.name));
}

const CONSUMER = `import {
  createAuthorizationRequest,
  createWorkPlatformClient,
  problemOf,
  verifyWebhook,
  type WebhookEnvelope,
  type WorkPlatformComponents,
} from '../dist/src/client/index.js';

const client = createWorkPlatformClient({ baseUrl: 'https://api.example.com', token: 'svc_pat_x' });
export const tasks = client.GET('/v1/tasks', { params: { query: { limit: 5 } } });
export const pages = client.paginate('/v1/tasks');
export const request = createAuthorizationRequest(
  { issuer: 'https://api.example.com', authorization_endpoint: 'https://api.example.com/oauth/authorize', token_endpoint: 'https://api.example.com/oauth/token' },
  { clientId: 'ocl_x', redirectUri: 'https://app.example.com/callback', scopes: ['tasks:read'] },
);
export const envelope: WebhookEnvelope = verifyWebhook(new TextEncoder().encode('{}'), { 'svc-signature': 't=1,v1=00' }, 'whsec_x');
export const task: WorkPlatformComponents['schemas']['Task'] | undefined = undefined;
export const problem = problemOf({});

// @ts-expect-error Buffer is Node's: were @types/node in this compilation (a reference in a declaration), this line would compile.
export type NodeBuffer = Buffer;
`;

describe('the client package in a consumer without @types/node', () => {
  it('has declarations that name no Node-only type', () => {
    const files = declarationFiles(path.join(folder, 'dist'));
    expect(files.length).toBeGreaterThan(5);
    const offending = files.filter((file) => /\bBuffer\b|\bNodeJS\.|from 'node:|reference types="node"/.test(readFileSync(file, 'utf8')));
    expect(offending.map((file) => path.relative(folder, file))).toEqual([]);
  });

  it('compiles with types: [] and every declaration checked', async () => {
    const consumer = path.join(folder, 'consumer');
    mkdirSync(consumer);
    writeFileSync(path.join(consumer, 'index.ts'), CONSUMER);
    writeFileSync(
      path.join(consumer, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { target: 'ES2022', lib: ['ES2022', 'DOM', 'DOM.Iterable'], module: 'ESNext', moduleResolution: 'Bundler', strict: true, noEmit: true, skipLibCheck: false, types: [] },
        files: ['index.ts'],
      }),
    );
    const result = await run(process.execPath, [tsc, '-p', path.join(consumer, 'tsconfig.json')], { cwd: consumer }).then(
      () => ({ code: 0, output: '' }),
      (error: { code?: number; stdout?: string; stderr?: string }) => ({ code: error.code ?? 1, output: `${error.stdout ?? ''}${error.stderr ?? ''}` }),
    );
    expect(result.output).toBe('');
    expect(result.code).toBe(0);
  }, 120_000);
});

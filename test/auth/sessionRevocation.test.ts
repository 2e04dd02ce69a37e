// A user's sessions revoked (as `admin session revoke` does) stop working at once; later ones work.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoUsers } from '../../src/demo/workPlatformDemo.js';
import { createUserStore } from '../../src/store/users.js';
import { issueSessionToken } from '../../src/auth/sessionTokens.js';
import { bearer, startTestApp, type TestApp } from '../support/testApp.js';
import { expectProblem } from '../support/workPlatform.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t?.close());

function sessionAt(now: number): string {
  const { ownerId, workspaceId } = { ownerId: demoUsers.owner.id, workspaceId: t.fixture.workPlatform.workspaceId };
  return issueSessionToken(t.sessionSecret, { userId: ownerId, workspaceId, lifetimeSeconds: 600, now });
}

describe('revoking a user\'s sessions', () => {
  it('refuses every session token issued before the revocation, and accepts one issued after it', async () => {
    const before = sessionAt(Date.now());
    expect((await t.workPlatformClient.get('/v1/tasks?limit=1', bearer(before))).status).toBe(200);

    const { sessionsValidAfter } = await createUserStore(t.db).revokeSessions(demoUsers.owner.id);
    const refused = await t.workPlatformClient.get('/v1/tasks?limit=1', bearer(before));
    expect(expectProblem(refused, 401, 'unauthenticated').detail).toContain('revoked');

    const after = sessionAt(sessionsValidAfter);
    expect((await t.workPlatformClient.get('/v1/tasks?limit=1', bearer(after))).status).toBe(200);
  });
});

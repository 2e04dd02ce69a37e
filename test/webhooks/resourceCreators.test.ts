import { describe, expect, it } from 'vitest';
import { createUserStore } from '../../src/store/users.js';
import { webhookCalls, webhookUrl } from '../support/webhookCalls.js';
import { expectProblem, expectSuccess, makePat, makeSession } from '../support/workPlatform.js';
import { bearer, useTestApp, type WorkPlatformTestApp } from '../support/testApp.js';

// Who created a webhook subscription or a connector (createdBy), and what removing that user does (creatorRemoved).
let app: WorkPlatformTestApp;
useTestApp(({ workPlatform: started }) => (app = started), { liftCallLimits: true });
const webhooks = webhookCalls(() => app, Date.now);

const send = (method: string, path: string, token: string, body?: unknown) =>
  app.client.request(method, path, {
    headers: { ...bearer(token), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

describe('createdBy and creatorRemoved of webhook subscriptions and connectors', () => {
  it('records the creating user, and flags what a removed user created without stopping it', async () => {
    const workspace = await webhooks.freshWorkspace();
    const users = createUserStore(app.t.store);
    const { id: adminId } = await users.createUser({ workspaceId: workspace.workspaceId, role: 'admin', name: 'Leaving admin' });
    const adminSession = makeSession(app.t.sessionSecret, { userId: adminId, workspaceId: workspace.workspaceId });
    const adminPat = await makePat(app.t.store, workspace.workspaceId, ['webhooks:manage', 'connectors:manage', 'connectors:read'], { userId: adminId });

    const webhook = expectSuccess(await send('POST', '/v1/webhooks', adminSession, { url: webhookUrl, eventTypes: ['task.created'] }), 201);
    expect(webhook).toMatchObject({ createdBy: adminId, creatorRemoved: false });
    const connector = expectSuccess(await send('POST', '/v1/connectors', adminPat, { kind: 'github', name: 'Made by the leaving admin' }), 201);
    expect(connector).toMatchObject({ createdBy: adminId, creatorRemoved: false });
    const ownersWebhook = expectSuccess(await send('POST', '/v1/webhooks', workspace.pat, { url: webhookUrl, eventTypes: ['task.updated'] }), 201);
    expect(ownersWebhook).toMatchObject({ createdBy: workspace.ownerId, creatorRemoved: false });

    const deleted = await users.deleteUser(adminId);
    expect(deleted.flagged).toEqual({ webhooks: [webhook.id], connectors: [connector.id] });

    // The admin's credentials are gone at once.
    expectProblem(await send('GET', '/v1/webhooks', adminSession), 401, 'unauthenticated');
    expectProblem(await send('GET', '/v1/connectors', adminPat), 401, 'unauthenticated');
    // What the admin made is still there, working, and says so to the owner: one by one and in the lists.
    const flagged = expectSuccess(await send('GET', `/v1/webhooks/${webhook.id}`, workspace.pat), 200);
    expect(flagged).toMatchObject({ createdBy: adminId, creatorRemoved: true, status: 'ACTIVE', version: webhook.version });
    const listed = expectSuccess(await send('GET', '/v1/webhooks', workspace.pat), 200);
    expect(Object.fromEntries(listed.items.map((item: { id: string; creatorRemoved: boolean }) => [item.id, item.creatorRemoved]))).toEqual({
      [webhook.id]: true,
      [ownersWebhook.id]: false,
    });
    expect(expectSuccess(await send('GET', `/v1/connectors/${connector.id}`, workspace.pat), 200)).toMatchObject({ createdBy: adminId, creatorRemoved: true });
    const connectors = expectSuccess(await send('GET', '/v1/connectors?limit=100', workspace.pat), 200);
    expect(connectors.items.find((item: { id: string }) => item.id === connector.id)).toMatchObject({ creatorRemoved: true });
    // An owner or admin lists what needs review, and the rest; the filter is bound into the cursor.
    const idsOf = (page: { items: Array<{ id: string }> }) => page.items.map((item) => item.id);
    expect(idsOf(expectSuccess(await send('GET', '/v1/webhooks?creatorRemoved=true', workspace.pat), 200))).toEqual([webhook.id]);
    expect(idsOf(expectSuccess(await send('GET', '/v1/webhooks?creatorRemoved=false', workspace.pat), 200))).toEqual([ownersWebhook.id]);
    expect(idsOf(expectSuccess(await send('GET', '/v1/connectors?creatorRemoved=true', workspace.pat), 200))).toEqual([connector.id]);
    expect(idsOf(expectSuccess(await send('GET', '/v1/connectors?creatorRemoved=false&limit=100', workspace.pat), 200))).not.toContain(connector.id);
    const firstOfRest = expectSuccess(await send('GET', '/v1/webhooks?creatorRemoved=false&limit=1', workspace.pat), 200);
    expect(firstOfRest.nextCursor).toBeNull();
    const firstOfAll = expectSuccess(await send('GET', '/v1/webhooks?limit=1', workspace.pat), 200);
    expectProblem(await send('GET', `/v1/webhooks?creatorRemoved=true&cursor=${encodeURIComponent(firstOfAll.nextCursor)}`, workspace.pat), 422, 'validation', 'cursor-mismatch');
    expectProblem(await send('GET', '/v1/webhooks?creatorRemoved=maybe', workspace.pat), 422, 'validation');
    // The owner keeps or removes it.
    expect((await send('DELETE', `/v1/webhooks/${webhook.id}`, workspace.pat)).status).toBe(204);
  });

  it("a member cannot create either, so a member's removal leaves nothing behind", async () => {
    const workspace = await webhooks.freshWorkspace();
    const { id: memberId } = await createUserStore(app.t.store).createUser({ workspaceId: workspace.workspaceId, role: 'member', name: 'Member' });
    const memberSession = makeSession(app.t.sessionSecret, { userId: memberId, workspaceId: workspace.workspaceId });
    expectProblem(await send('POST', '/v1/webhooks', memberSession, { url: webhookUrl, eventTypes: ['task.created'] }), 403, 'insufficient-role');
    expectProblem(await send('POST', '/v1/connectors', memberSession, { kind: 'github', name: 'x' }), 403, 'insufficient-role');
  });
});

import { describe, expect, it } from 'vitest';
import { contractOperations } from '../support/operations.js';
import type { TestApp } from '../support/testApp.js';
import { webhookCalls, webhookUrl as url } from '../support/webhookCalls.js';
import { expectProblem, makePat } from '../support/workPlatform.js';
import { useWorkPlatformTestApp, type WorkPlatformFixture } from '../support/workPlatformApp.js';

/**
 * The scope gate of every webhook operation of the served contract, with real subscriptions: a
 * token with every other scope is refused, one with only webhooks:manage acts.
 */
let t: TestApp;
let fx: WorkPlatformFixture;
useWorkPlatformTestApp((app) => ({ t, fx } = app));

const { send, freshWorkspace, newWebhook } = webhookCalls(() => ({ t, client: t.workPlatformClient, fx }), Date.now);

describe('scopes', () => {
  const webhookOperations = contractOperations('work-platform').filter((operation) => operation.template.startsWith('/v1/webhooks'));

  it('covers the eight webhook operations', () => {
    expect(webhookOperations.map((operation) => operation.operationId).sort()).toEqual(
      ['createWebhook', 'deleteWebhook', 'getWebhook', 'listWebhookDeliveries', 'listWebhooks', 'replayWebhookEvents', 'rotateWebhookKey', 'updateWebhook'],
    );
    for (const operation of webhookOperations) expect(operation.requiredScopes).toEqual(['webhooks:manage']);
  });

  it.each(webhookOperations.map((operation) => [operation.operationId, operation] as const))(
    '%s answers 403 insufficient-scope to a token with every other scope, and acts for one with only webhooks:manage',
    async (_operationId, operation) => {
      const workspace = await freshWorkspace();
      const everythingElse = await makePat(t.store, workspace.workspaceId, ['tasks:read', 'tasks:write', 'projects:read', 'projects:write', 'workspace:read'], { userId: workspace.ownerId });
      const onlyWebhooks = await makePat(t.store, workspace.workspaceId, ['webhooks:manage'], { userId: workspace.ownerId });
      const target = await newWebhook({}, workspace.pat);
      const resourcePath = operation.template.replace('{webhookId}', target.id);
      const body = operation.operationId === 'createWebhook' ? { url, eventTypes: ['task.created'] } : operation.operationId === 'replayWebhookEvents' ? { from: '2020-01-01T00:00:00Z', to: '2020-01-02T00:00:00Z' } : operation.operationId === 'updateWebhook' ? { description: 'scoped' } : undefined;
      const headers: Record<string, string> = operation.operationId === 'updateWebhook' ? { 'if-match': '1' } : {};
      const refused = expectProblem(await send(operation.method, resourcePath, { token: everythingElse, body, headers }), 403, 'insufficient-scope');
      expect(refused.requiredScopes).toEqual(['webhooks:manage']);
      const accepted = await send(operation.method, resourcePath, { token: onlyWebhooks, body, headers });
      expect(accepted.status, accepted.text).toBeLessThan(300);
    },
  );
});

// The sealed columns that `admin keys reseal` works through, on both engines: batches in key order
// (a composite key for idempotency keys), the newest key's values left out, plain JSON answers
// never listed, and a replacement that keeps a value changed meanwhile.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { idempotencyKeys, users, webhookSubscriptions, workspaces } from '../../db/schema.js';
import { fixedKeyRing } from '../../src/auth/keyRings.js';
import type { StoreEngine } from '../../src/store/engine.js';
import { createSealedColumnStore } from '../../src/store/sealedColumns.js';
import { createSecretBox } from '../../src/auth/secretBox.js';
import { storeEngines, type OpenedEngine } from '../support/engines.js';

const oldBox = createSecretBox(new Uint8Array(32).fill(1));
const rotatedBox = createSecretBox(
  fixedKeyRing([
    { id: 'k0', key: new Uint8Array(32).fill(1), addedAt: undefined },
    { id: 'k1', key: new Uint8Array(32).fill(2), addedAt: 1 },
  ]),
);

describe.each(storeEngines)('sealed columns on $name', (engineCase) => {
  let opened: OpenedEngine;
  let engine: StoreEngine;

  beforeEach(async () => {
    opened = await engineCase.open();
    engine = opened.engine;
    const { orm } = engine;
    await engine.write(async () => {
      await engine.statement(orm.insert(workspaces).values({ id: 'ten_a', name: 'A', plan: 'free', createdAt: 1 })).run({});
      await engine.statement(orm.insert(users).values({ id: 'usr_a', workspaceId: 'ten_a', role: 'owner', createdAt: 1 })).run({});
      for (const id of ['whk_1', 'whk_2', 'whk_3']) {
        await engine
          .statement(
            orm.insert(webhookSubscriptions).values({
              id, workspaceId: 'ten_a', url: 'https://hooks.example.com/x', eventTypes: '["task.created"]', status: 'ACTIVE',
              signingKeyVersion: 1, sealedSecret: (id === 'whk_2' ? rotatedBox : oldBox).seal(`secret ${id}`, id), version: 1, createdAt: 1, updatedAt: 1,
            }),
          )
          .run({});
      }
      for (const key of ['a', 'b', 'c']) {
        const body = key === 'b' ? '{"plain":true}' : oldBox.seal(`answer ${key}`, `idempotent-answer:ten_a:${key}`);
        await engine
          .statement(orm.insert(idempotencyKeys).values({ workspaceId: 'ten_a', key, method: 'POST', path: '/v1/tasks', status: 201, headers: '{}', body, createdAt: 1, expiresAt: 2 }))
          .run({});
      }
    });
  });
  afterEach(() => opened.close());

  it('lists what an older key sealed in key order, batch after batch, and replaces only unchanged values', async () => {
    const store = createSealedColumnStore(engine);
    const first = await store.batch('webhook_subscriptions.sealed_secret', undefined, 1, 'v2.k1.');
    expect(first.map((value) => value.recordKey)).toEqual([['whk_1']]);
    const next = await store.batch('webhook_subscriptions.sealed_secret', first[0]!.recordKey, 5, 'v2.k1.');
    expect(next.map((value) => value.recordKey)).toEqual([['whk_3']]);
    expect((await store.batch('webhook_subscriptions.sealed_secret', undefined, 5)).map((value) => value.recordKey)).toEqual([['whk_1'], ['whk_2'], ['whk_3']]);

    const answers = await store.batch('idempotency_keys.body', undefined, 1, 'v2.k1.');
    expect(answers.map((value) => value.recordKey)).toEqual([['ten_a', 'a']]);
    expect((await store.batch('idempotency_keys.body', answers[0]!.recordKey, 5, 'v2.k1.')).map((value) => value.recordKey)).toEqual([['ten_a', 'c']]);

    const value = first[0]!;
    const resealed = rotatedBox.seal(rotatedBox.open(value.sealed, 'whk_1'), 'whk_1');
    expect(await store.write(() => store.replace(value, resealed))).toBe(true);
    expect(await store.write(() => store.replace(value, resealed))).toBe(false);
    expect(await store.write(() => store.replace(answers[0]!, 'v2.k1.x'))).toBe(true);
    expect((await store.batch('webhook_subscriptions.sealed_secret', undefined, 5, 'v2.k1.')).map((row) => row.recordKey)).toEqual([['whk_3']]);
    expect(rotatedBox.open((await store.batch('webhook_subscriptions.sealed_secret', undefined, 1))[0]!.sealed, 'whk_1')).toBe('secret whk_1');
  });
});

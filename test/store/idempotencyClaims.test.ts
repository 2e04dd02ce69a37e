import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createIdempotencyClaimStore } from '../../src/store/idempotencyClaims.js';
import { makeDatabase, type TempDatabase } from './factories.js';
import { makeWorkspace } from './workPlatformFactories.js';

let t: TempDatabase;
let workspaceId: string;
beforeEach(async () => {
  t = makeDatabase();
  workspaceId = (await makeWorkspace(t.db)).workspaceId;
});
afterEach(() => t.cleanup());

describe('idempotency claims', () => {
  it('lets one request hold a key until it releases it or its claim lapses', async () => {
    const store = createIdempotencyClaimStore(t.db);
    const claim = (now: number) => store.claimIdempotencyKey({ workspaceId, key: 'k1', now, claimedUntil: now + 1000 });
    expect(await claim(0)).toBe(true);
    expect(await claim(999)).toBe(false);
    // A claim whose process died lapses at its end.
    expect(await claim(1000)).toBe(true);
    await store.releaseIdempotencyClaim(workspaceId, 'k1', 2000);
    expect(await claim(1001)).toBe(true);
  });

  it('releases only the claim it names: the request whose claim lapsed cannot drop the one that took it over', async () => {
    const store = createIdempotencyClaimStore(t.db);
    const claim = (now: number) => store.claimIdempotencyKey({ workspaceId, key: 'k1', now, claimedUntil: now + 1000 });
    expect(await claim(0)).toBe(true);
    expect(await claim(1000)).toBe(true);
    // The first request, still running past its lease, answers and releases its own claim.
    await store.releaseIdempotencyClaim(workspaceId, 'k1', 1000);
    expect(await claim(1500)).toBe(false);
    await store.releaseIdempotencyClaim(workspaceId, 'k1', 2000);
    expect(await claim(1500)).toBe(true);
  });

  it('purges only the claims that lapsed', async () => {
    const store = createIdempotencyClaimStore(t.db);
    await store.claimIdempotencyKey({ workspaceId, key: 'lapsed', now: 0, claimedUntil: 1000 });
    await store.claimIdempotencyKey({ workspaceId, key: 'live', now: 0, claimedUntil: 5000 });
    expect(await store.purgeLapsedIdempotencyClaims(1000)).toBe(1);
    expect(await store.claimIdempotencyKey({ workspaceId, key: 'live', now: 1000, claimedUntil: 6000 })).toBe(false);
  });

  it('keeps keys and workspaces apart', async () => {
    const store = createIdempotencyClaimStore(t.db);
    const other = (await makeWorkspace(t.db)).workspaceId;
    expect(await store.claimIdempotencyKey({ workspaceId, key: 'k1', now: 0, claimedUntil: 1000 })).toBe(true);
    expect(await store.claimIdempotencyKey({ workspaceId, key: 'k2', now: 0, claimedUntil: 1000 })).toBe(true);
    expect(await store.claimIdempotencyKey({ workspaceId: other, key: 'k1', now: 0, claimedUntil: 1000 })).toBe(true);
  });
});

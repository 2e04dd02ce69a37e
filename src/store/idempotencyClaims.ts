// Claims on idempotency keys whose first request runs outside a transaction (it waits for an AI
// provider before it can answer): while the claim lives, a second request with the key is refused
// instead of acting twice. Taken and checked inside the caller's write transaction.
import { and, eq, lte, sql } from 'drizzle-orm';
import { idempotencyClaims } from '../../db/schema.js';
import { engineOf, type StoreSource } from './engine.js';

export interface IdempotencyClaimStore {
  /**
   * Claims the key until `claimedUntil`; false when another request holds a live claim on it. A
   * claim whose time has passed (its process died) is taken over.
   */
  claimIdempotencyKey(input: { workspaceId: string; key: string; now: number; claimedUntil: number }): Promise<boolean>;
  /** Drops the claim taken until `claimedUntil`, and no other: a claim that lapsed and was taken over stays. */
  releaseIdempotencyClaim(workspaceId: string, key: string, claimedUntil: number): Promise<void>;
  /** Deletes claims that lapsed (left by processes that died); returns how many. Run on a schedule. */
  purgeLapsedIdempotencyClaims(now: number): Promise<number>;
}

export function createIdempotencyClaimStore(source: StoreSource): IdempotencyClaimStore {
  const engine = engineOf(source);
  const { orm } = engine;
  const claim = engine.statement(
    orm
    .insert(idempotencyClaims)
    .values({ workspaceId: sql.placeholder('workspaceId'), key: sql.placeholder('key'), claimedUntil: sql.placeholder('claimedUntil') })
    .onConflictDoUpdate({
      target: [idempotencyClaims.workspaceId, idempotencyClaims.key],
      // drizzle has no name for the row that failed to insert; SQLite calls it `excluded`.
      set: { claimedUntil: sql`excluded.claimed_until` },
      setWhere: lte(idempotencyClaims.claimedUntil, sql.placeholder('now')),
    }),
  );
  const release = engine.statement(
    orm
    .delete(idempotencyClaims)
    .where(
      and(
        eq(idempotencyClaims.workspaceId, sql.placeholder('workspaceId')),
        eq(idempotencyClaims.key, sql.placeholder('key')),
        eq(idempotencyClaims.claimedUntil, sql.placeholder('claimedUntil')),
      ),
    ),
  );
  const purge = engine.statement(orm.delete(idempotencyClaims).where(lte(idempotencyClaims.claimedUntil, sql.placeholder('now'))));
  return {
    claimIdempotencyKey: async (input) => (await engine.write(() => claim.run(input))) > 0,
    async releaseIdempotencyClaim(workspaceId, key, claimedUntil) {
      await engine.write(() => release.run({ workspaceId, key, claimedUntil }));
    },
    purgeLapsedIdempotencyClaims: (now) => engine.write(() => purge.run({ now })),
  };
}

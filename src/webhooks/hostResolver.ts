import { promises as dnsPromises } from 'node:dns';
import type { LookupAll, ResolvedAddress } from './targetGuard.js';

/**
 * How subscriber host names are resolved, at create/update and before every delivery: one
 * resolver per process, shared by the API and the delivery worker, with a cache.
 *
 * Decision (issue 25, item 6): names are resolved with `dns.promises.Resolver` (c-ares)
 * `resolve4` and `resolve6` with `{ ttl: true }`, not with `dns.lookup`. c-ares queries are
 * asynchronous sockets, not getaddrinfo calls on libuv's 4-thread pool (shared with file and
 * crypto work, and uncancellable), and they carry the records' TTLs, which `dns.lookup` does not.
 * Consequences: /etc/hosts and nsswitch are not consulted (webhook targets are public names);
 * `localhost` is answered here with the loopback addresses (RFC 6761) without a query.
 *
 * The cache:
 * - an answer is kept for its smallest record TTL, clamped to [POSITIVE_TTL_MIN_S, POSITIVE_TTL_MAX_S];
 * - a name that does not exist or has no address (ENOTFOUND, ENODATA) is kept NEGATIVE_TTL_S;
 * - a failed resolution (timeout, server failure, refused) is kept FAILURE_TTL_S, so that one
 *   slow name costs one query per few seconds, not one per delivery;
 * - at most MAX_CACHED_NAMES names, the least recently stored dropped first.
 * Concurrent resolutions of one name share one query; at most `maxConcurrent` queries run at once
 * (the others wait for a slot), and a query that has not answered within `queryTimeoutMs` counts
 * as failed (ETIMEOUT) and frees its slot. Each caller may bound its own wait (`timeoutMs`) and
 * gets `{ ok: false, code: 'ETIMEOUT' }` when it ends first; the query goes on for the others and
 * for the cache.
 */

export const POSITIVE_TTL_MIN_S = 5;
export const POSITIVE_TTL_MAX_S = 300;
export const NEGATIVE_TTL_S = 30;
export const FAILURE_TTL_S = 5;
export const MAX_CACHED_NAMES = 10_000;
export const DNS_QUERY_TIMEOUT_MS = 5_000;
export const MAX_CONCURRENT_QUERIES = 32;

export interface DnsRecord {
  address: string;
  ttl: number;
}

/** The part of `dns.promises.Resolver` used here, injectable for tests and the bench. */
export interface DnsResolver {
  resolve4(hostname: string, options: { ttl: true }): Promise<DnsRecord[]>;
  resolve6(hostname: string, options: { ttl: true }): Promise<DnsRecord[]>;
}

export type Resolution =
  | { ok: true; addresses: ResolvedAddress[] }
  /** `code`: the resolver's (ENOTFOUND, ENODATA, ESERVFAIL…), or ETIMEOUT when no answer came in time. */
  | { ok: false; code: string };

export interface HostResolver {
  /** The name's addresses (cached, or asked for); never rejects. `timeoutMs` bounds this caller's wait. */
  resolve(hostname: string, options?: { timeoutMs?: number }): Promise<Resolution>;
  /** The cached answer, when one is still fresh: no query, no waiting. */
  cached(hostname: string): Resolution | undefined;
}

export interface HostResolverOptions {
  /** c-ares's resolver by default (see {@link systemDnsResolver}). */
  resolver?: DnsResolver;
  /**
   * A `dns.lookup`-shaped source instead (tests written against it): it gives no TTL, so its
   * answers are kept POSITIVE_TTL_MIN_S.
   */
  lookup?: LookupAll;
  /** Milliseconds since the epoch: the cache's clock. */
  now?: () => number;
  maxConcurrent?: number;
  queryTimeoutMs?: number;
}

type Answer = { resolution: Resolution; ttlSeconds: number };

const NONEXISTENT = new Set(['ENOTFOUND', 'ENODATA', 'NXDOMAIN', 'ENONAME']);

const codeOf = (error: unknown): string => (error as NodeJS.ErrnoException | undefined)?.code ?? 'EUNKNOWN';

/**
 * The system's DNS servers (or `servers`, WEBHOOK_DNS_SERVERS) through c-ares; `localhost`
 * answered with the loopback addresses.
 */
export function systemDnsResolver(options: { timeoutMs?: number; tries?: number; servers?: string[] } = {}): DnsResolver {
  const resolver = new dnsPromises.Resolver({ timeout: options.timeoutMs ?? 2_000, tries: options.tries ?? 2 });
  if (options.servers && options.servers.length > 0) resolver.setServers(options.servers);
  const isLocalhost = (host: string) => host === 'localhost';
  return {
    resolve4: (host, ttl) => (isLocalhost(host) ? Promise.resolve([{ address: '127.0.0.1', ttl: POSITIVE_TTL_MAX_S }]) : resolver.resolve4(host, ttl)),
    resolve6: (host, ttl) => (isLocalhost(host) ? Promise.resolve([{ address: '::1', ttl: POSITIVE_TTL_MAX_S }]) : resolver.resolve6(host, ttl)),
  };
}

/** Both families asked at once; an answer from either is an answer (the other may have none). */
async function askResolver(resolver: DnsResolver, hostname: string): Promise<Answer> {
  const [v4, v6] = await Promise.allSettled([resolver.resolve4(hostname, { ttl: true }), resolver.resolve6(hostname, { ttl: true })]);
  const addresses: ResolvedAddress[] = [];
  let ttl = Number.POSITIVE_INFINITY;
  for (const [result, family] of [
    [v4, 4],
    [v6, 6],
  ] as const) {
    if (result.status !== 'fulfilled') continue;
    for (const record of result.value) {
      addresses.push({ address: record.address, family });
      ttl = Math.min(ttl, record.ttl);
    }
  }
  if (addresses.length > 0) return { resolution: { ok: true, addresses }, ttlSeconds: clampTtl(ttl) };
  const failures = [v4, v6].filter((result): result is PromiseRejectedResult => result.status === 'rejected').map((result) => codeOf(result.reason));
  // Both families answered "no such name / no address": the name has none. Anything else is a failure.
  const code = failures.find((failure) => !NONEXISTENT.has(failure)) ?? failures[0] ?? 'ENODATA';
  return failed(code);
}

async function askLookup(lookup: LookupAll, hostname: string): Promise<Answer> {
  try {
    const addresses = await lookup(hostname, { all: true });
    if (addresses.length === 0) return failed('ENODATA');
    return { resolution: { ok: true, addresses: addresses.map(({ address, family }) => ({ address, family })) }, ttlSeconds: POSITIVE_TTL_MIN_S };
  } catch (error) {
    return failed(codeOf(error));
  }
}

function clampTtl(ttl: number): number {
  if (!Number.isFinite(ttl)) return POSITIVE_TTL_MIN_S;
  return Math.min(POSITIVE_TTL_MAX_S, Math.max(POSITIVE_TTL_MIN_S, ttl));
}

function failed(code: string): Answer {
  return { resolution: { ok: false, code }, ttlSeconds: NONEXISTENT.has(code) ? NEGATIVE_TTL_S : FAILURE_TTL_S };
}

const TIMED_OUT: Resolution = { ok: false, code: 'ETIMEOUT' };

export function createHostResolver(options: HostResolverOptions = {}): HostResolver {
  const now = options.now ?? Date.now;
  const maxConcurrent = options.maxConcurrent ?? MAX_CONCURRENT_QUERIES;
  const queryTimeoutMs = options.queryTimeoutMs ?? DNS_QUERY_TIMEOUT_MS;
  const lookup = options.lookup;
  const resolver = lookup ? undefined : (options.resolver ?? systemDnsResolver());
  const ask = (hostname: string) => (lookup ? askLookup(lookup, hostname) : askResolver(resolver!, hostname));

  const cache = new Map<string, { resolution: Resolution; expiresAt: number }>();
  const pending = new Map<string, Promise<Resolution>>();
  let running = 0;
  const waiting: Array<() => void> = [];

  function store(hostname: string, { resolution, ttlSeconds }: Answer): void {
    cache.delete(hostname);
    if (cache.size >= MAX_CACHED_NAMES) cache.delete(cache.keys().next().value!);
    cache.set(hostname, { resolution, expiresAt: now() + ttlSeconds * 1000 });
  }

  function cached(hostname: string): Resolution | undefined {
    const entry = cache.get(hostname);
    if (!entry) return undefined;
    if (entry.expiresAt <= now()) {
      cache.delete(hostname);
      return undefined;
    }
    return entry.resolution;
  }

  /** One query within its slot and its time limit; its answer is cached. */
  async function query(hostname: string): Promise<Resolution> {
    // A slot is handed from the query that ends to the next waiting one, never taken between.
    if (running >= maxConcurrent) await new Promise<void>((resolve) => waiting.push(resolve));
    else running += 1;
    let timer: NodeJS.Timeout | undefined;
    try {
      const answer = await Promise.race([
        ask(hostname),
        new Promise<Answer>((resolve) => {
          timer = setTimeout(() => resolve(failed('ETIMEOUT')), queryTimeoutMs);
        }),
      ]);
      store(hostname, answer);
      return answer.resolution;
    } finally {
      clearTimeout(timer);
      const next = waiting.shift();
      if (next) next();
      else running -= 1;
    }
  }

  return {
    cached,
    resolve(hostname, { timeoutMs } = {}) {
      const hit = cached(hostname);
      if (hit) return Promise.resolve(hit);
      let shared = pending.get(hostname);
      if (!shared) {
        shared = query(hostname).finally(() => pending.delete(hostname));
        pending.set(hostname, shared);
      }
      if (timeoutMs === undefined) return shared;
      let timer: NodeJS.Timeout | undefined;
      return Promise.race([
        shared,
        new Promise<Resolution>((resolve) => {
          timer = setTimeout(() => resolve(TIMED_OUT), Math.max(0, timeoutMs));
        }),
      ]).finally(() => clearTimeout(timer));
    },
  };
}

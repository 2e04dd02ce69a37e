import { describe, expect, it } from 'vitest';
import {
  createHostResolver,
  FAILURE_TTL_S,
  NEGATIVE_TTL_S,
  POSITIVE_TTL_MAX_S,
  POSITIVE_TTL_MIN_S,
  systemDnsResolver,
  type DnsResolver,
} from '../../src/webhooks/hostResolver.js';
import { fakeDnsResolver } from '../support/fakeDns.js';

function clock(start = Date.UTC(2026, 10, 27, 9, 0, 0)) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

const queriesOf = (asked: string[], name: string) => asked.filter((query) => query.endsWith(` ${name}`)).length;

describe('the host resolver', () => {
  it('asks both families, answers every address, and keeps the answer for its smallest TTL', async () => {
    const time = clock();
    const dns = fakeDnsResolver({ 'hooks.example.com': { addresses: ['93.184.216.34', '2606:2800:220:1::1'], ttl: 42 } });
    const resolver = createHostResolver({ resolver: dns, now: time.now });
    expect(await resolver.resolve('hooks.example.com')).toStrictEqual({
      ok: true,
      addresses: [
        { address: '93.184.216.34', family: 4 },
        { address: '2606:2800:220:1::1', family: 6 },
      ],
    });
    expect(dns.asked).toStrictEqual(['A hooks.example.com', 'AAAA hooks.example.com']);

    dns.set('hooks.example.com', ['10.0.0.1']);
    time.advance(41_999);
    expect(resolver.cached('hooks.example.com')).toMatchObject({ ok: true, addresses: [{ address: '93.184.216.34' }, { address: '2606:2800:220:1::1' }] });
    expect(await resolver.resolve('hooks.example.com')).toMatchObject({ ok: true, addresses: [{ address: '93.184.216.34' }, { address: '2606:2800:220:1::1' }] });
    expect(dns.asked).toHaveLength(2);
    time.advance(1);
    expect(resolver.cached('hooks.example.com')).toBeUndefined();
    expect(await resolver.resolve('hooks.example.com')).toStrictEqual({ ok: true, addresses: [{ address: '10.0.0.1', family: 4 }] });
    expect(dns.asked).toHaveLength(4);
  });

  it(`clamps TTLs to [${POSITIVE_TTL_MIN_S}, ${POSITIVE_TTL_MAX_S}] s`, async () => {
    const time = clock();
    const dns = fakeDnsResolver({ 'zero.example.com': { addresses: ['93.184.216.34'], ttl: 0 }, 'day.example.com': { addresses: ['93.184.216.35'], ttl: 86_400 } });
    const resolver = createHostResolver({ resolver: dns, now: time.now });
    await resolver.resolve('zero.example.com');
    await resolver.resolve('day.example.com');
    time.advance(POSITIVE_TTL_MIN_S * 1000 - 1);
    expect(resolver.cached('zero.example.com')).toMatchObject({ ok: true });
    time.advance(1);
    expect(resolver.cached('zero.example.com')).toBeUndefined();
    time.advance(POSITIVE_TTL_MAX_S * 1000 - POSITIVE_TTL_MIN_S * 1000 - 1);
    expect(resolver.cached('day.example.com')).toMatchObject({ ok: true });
    time.advance(1);
    expect(resolver.cached('day.example.com')).toBeUndefined();
  });

  it(`keeps a name that does not exist ${NEGATIVE_TTL_S} s and a failed resolution ${FAILURE_TTL_S} s`, async () => {
    const time = clock();
    const dns = fakeDnsResolver({ 'broken.example.com': { code: 'ESERVFAIL' } });
    const resolver = createHostResolver({ resolver: dns, now: time.now });
    expect(await resolver.resolve('missing.example.com')).toStrictEqual({ ok: false, code: 'ENOTFOUND' });
    expect(await resolver.resolve('broken.example.com')).toStrictEqual({ ok: false, code: 'ESERVFAIL' });
    dns.set('missing.example.com', ['93.184.216.34']);
    dns.set('broken.example.com', ['93.184.216.35']);

    time.advance(FAILURE_TTL_S * 1000 - 1);
    expect(await resolver.resolve('broken.example.com')).toStrictEqual({ ok: false, code: 'ESERVFAIL' });
    time.advance(1);
    expect(await resolver.resolve('broken.example.com')).toMatchObject({ ok: true });

    expect(await resolver.resolve('missing.example.com')).toStrictEqual({ ok: false, code: 'ENOTFOUND' });
    time.advance(NEGATIVE_TTL_S * 1000 - FAILURE_TTL_S * 1000);
    expect(await resolver.resolve('missing.example.com')).toMatchObject({ ok: true });
    expect(queriesOf(dns.asked, 'missing.example.com')).toBe(4);
  });

  it('a name with addresses of one family only answers those; one with none answers ENODATA', async () => {
    const dns = fakeDnsResolver({ 'v6.example.com': ['2606:4700::1'], 'empty.example.com': [] });
    const resolver = createHostResolver({ resolver: dns });
    expect(await resolver.resolve('v6.example.com')).toStrictEqual({ ok: true, addresses: [{ address: '2606:4700::1', family: 6 }] });
    expect(await resolver.resolve('empty.example.com')).toStrictEqual({ ok: false, code: 'ENODATA' });
  });

  it('asks once for callers of one name at the same time, and lets each caller bound its own wait', async () => {
    const time = clock();
    const dns = fakeDnsResolver({ 'slow.example.com': { delayMs: 150, addresses: ['93.184.216.34'] } });
    const resolver = createHostResolver({ resolver: dns, now: time.now });
    const impatient = resolver.resolve('slow.example.com', { timeoutMs: 20 });
    const patient = resolver.resolve('slow.example.com');
    expect(await impatient).toStrictEqual({ ok: false, code: 'ETIMEOUT' });
    expect(await patient).toMatchObject({ ok: true });
    expect(dns.asked).toStrictEqual(['A slow.example.com', 'AAAA slow.example.com']);
    // The answer that came after the impatient caller left is cached for the next.
    expect(resolver.cached('slow.example.com')).toMatchObject({ ok: true });
  });

  it('runs at most maxConcurrent queries; one that never answers fails at the query timeout, is kept as failed, and frees its slot', async () => {
    const time = clock();
    const dns = fakeDnsResolver({ 'stuck-1.example.com': 'never', 'stuck-2.example.com': 'never', 'fast.example.com': ['93.184.216.34'] });
    const resolver = createHostResolver({ resolver: dns, now: time.now, maxConcurrent: 2, queryTimeoutMs: 100 });
    const started = performance.now();
    const stuck = [resolver.resolve('stuck-1.example.com'), resolver.resolve('stuck-2.example.com')];
    const fast = resolver.resolve('fast.example.com');
    // Both slots are taken: the third waits without asking.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(queriesOf(dns.asked, 'fast.example.com')).toBe(0);
    expect(await Promise.all(stuck)).toStrictEqual([
      { ok: false, code: 'ETIMEOUT' },
      { ok: false, code: 'ETIMEOUT' },
    ]);
    expect(await fast).toMatchObject({ ok: true });
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(resolver.cached('stuck-1.example.com')).toStrictEqual({ ok: false, code: 'ETIMEOUT' });
    time.advance(FAILURE_TTL_S * 1000);
    expect(resolver.cached('stuck-1.example.com')).toBeUndefined();
  });

  it('a dns.lookup-shaped source (no TTL) is kept the shortest TTL', async () => {
    const time = clock();
    let calls = 0;
    const resolver = createHostResolver({
      lookup: async () => (calls++, [{ address: '93.184.216.34', family: 4 }]),
      now: time.now,
    });
    await resolver.resolve('hooks.example.com');
    time.advance(POSITIVE_TTL_MIN_S * 1000 - 1);
    await resolver.resolve('hooks.example.com');
    expect(calls).toBe(1);
    time.advance(1);
    await resolver.resolve('hooks.example.com');
    expect(calls).toBe(2);
  });

  it("the system resolver answers localhost with the loopback addresses without asking a server", async () => {
    const system: DnsResolver = systemDnsResolver();
    expect(await system.resolve4('localhost', { ttl: true })).toMatchObject([{ address: '127.0.0.1' }]);
    expect(await system.resolve6('localhost', { ttl: true })).toMatchObject([{ address: '::1' }]);
  });
});

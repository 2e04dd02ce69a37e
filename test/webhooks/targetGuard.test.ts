import { describe, expect, it } from 'vitest';
import {
  checkResolvedAddress,
  checkTargetUrl,
  resolveAndCheck,
  type LookupAll,
  type ResolvedAddress,
  type TargetUrlProblemCode,
} from '../../src/webhooks/targetGuard.js';
import { createHostResolver } from '../../src/webhooks/hostResolver.js';

const off = { allowLoopback: false };
const on = { allowLoopback: true };

function codesOf(url: string, options: { allowLoopback: boolean }): TargetUrlProblemCode[] {
  const check = checkTargetUrl(url, options);
  return check.ok ? [] : check.reasons.map((reason) => reason.code);
}

describe('checkTargetUrl', () => {
  // [url, reasons without the loopback flag, reasons with it]
  const table: Array<[string, TargetUrlProblemCode[], TargetUrlProblemCode[]]> = [
    // Public HTTPS addresses.
    ['https://hooks.example.com/webhooks', [], []],
    ['https://hooks.example.com:8443/in?tenant=1', [], []],
    ['https://93.184.216.34/hook', [], []],
    ['https://[2606:4700:4700::1111]/hook', [], []],
    ['https://[::ffff:8.8.8.8]/hook', [], []],
    ['https://[64:ff9b::808:808]/hook', [], []],
    // Scheme.
    ['http://hooks.example.com/webhooks', ['https-required'], ['https-required']],
    ['ftp://hooks.example.com/', ['https-required'], ['https-required']],
    ['javascript:alert(1)', ['https-required'], ['https-required']],
    ['not a url', ['invalid-url'], ['invalid-url']],
    ['/relative/path', ['invalid-url'], ['invalid-url']],
    // Loopback: only with the flag, and only these three hosts over http.
    ['http://127.0.0.1:4000/hook', ['https-required', 'forbidden-address'], []],
    ['http://[::1]:4000/hook', ['https-required', 'forbidden-address'], []],
    ['http://localhost:4000/hook', ['https-required', 'localhost-not-allowed'], []],
    ['http://LOCALHOST./hook', ['https-required', 'localhost-not-allowed'], []],
    ['https://localhost/hook', ['localhost-not-allowed'], []],
    ['https://127.0.0.1/hook', ['forbidden-address'], []],
    ['http://127.0.0.2/hook', ['https-required', 'forbidden-address'], ['https-required', 'forbidden-address']],
    ['http://app.localhost/hook', ['https-required', 'localhost-not-allowed'], ['https-required', 'localhost-not-allowed']],
    ['http://[::ffff:127.0.0.1]/hook', ['https-required', 'forbidden-address'], ['https-required', 'forbidden-address']],
    ['https://[::ffff:127.0.0.1]/hook', ['forbidden-address'], ['forbidden-address']],
    ['http://0.0.0.0:4000/', ['https-required', 'forbidden-address'], ['https-required', 'forbidden-address']],
    // Other spellings of 127.0.0.1, which the URL parser normalizes: the flag admits them as 127.0.0.1.
    ['https://2130706433/', ['forbidden-address'], []],
    ['https://0x7f.1/', ['forbidden-address'], []],
    ['https://0177.0.0.1/', ['forbidden-address'], []],
    ['https://127.1/', ['forbidden-address'], []],
    ['http://2130706433/', ['https-required', 'forbidden-address'], []],
    ['http://0x7f.1/', ['https-required', 'forbidden-address'], []],
    // Private, link-local, metadata, CGNAT, and friends as IP literals.
    ['https://10.0.0.1/', ['forbidden-address'], ['forbidden-address']],
    ['https://0xa000001/', ['forbidden-address'], ['forbidden-address']],
    ['https://172.16.5.4/', ['forbidden-address'], ['forbidden-address']],
    ['https://192.168.1.1/', ['forbidden-address'], ['forbidden-address']],
    ['https://169.254.169.254/latest/meta-data/', ['forbidden-address'], ['forbidden-address']],
    ['http://169.254.169.254/latest/meta-data/', ['https-required', 'forbidden-address'], ['https-required', 'forbidden-address']],
    ['https://100.64.0.1/', ['forbidden-address'], ['forbidden-address']],
    ['https://224.0.0.1/', ['forbidden-address'], ['forbidden-address']],
    ['https://255.255.255.255/', ['forbidden-address'], ['forbidden-address']],
    ['https://192.0.2.10/', ['forbidden-address'], ['forbidden-address']],
    ['https://[fd00::1]/', ['forbidden-address'], ['forbidden-address']],
    ['https://[fe80::1]/', ['forbidden-address'], ['forbidden-address']],
    ['https://[::1]/', ['forbidden-address'], []],
    ['https://[::]/', ['forbidden-address'], ['forbidden-address']],
    ['https://[::ffff:10.0.0.1]/', ['forbidden-address'], ['forbidden-address']],
    ['https://[::ffff:a00:1]/', ['forbidden-address'], ['forbidden-address']],
    ['https://[::ffff:169.254.169.254]/', ['forbidden-address'], ['forbidden-address']],
    ['https://[64:ff9b::a00:1]/', ['forbidden-address'], ['forbidden-address']],
    ['https://[2001:db8::1]/', ['forbidden-address'], ['forbidden-address']],
    // Credentials and fragments.
    ['https://user:pass@hooks.example.com/', ['credentials-in-url'], ['credentials-in-url']],
    ['https://user@hooks.example.com/', ['credentials-in-url'], ['credentials-in-url']],
    ['https://:pass@hooks.example.com/', ['credentials-in-url'], ['credentials-in-url']],
    ['https://hooks.example.com/in#section', ['fragment-in-url'], ['fragment-in-url']],
    ['https://hooks.example.com/in#', ['fragment-in-url'], ['fragment-in-url']],
    // Everything at once: every reason is listed.
    ['http://u:p@10.0.0.1/#x', ['https-required', 'credentials-in-url', 'fragment-in-url', 'forbidden-address'], ['https-required', 'credentials-in-url', 'fragment-in-url', 'forbidden-address']],
  ];

  it('has a table of at least 40 URLs', () => expect(table.length).toBeGreaterThanOrEqual(40));

  it.each(table)('%s', (url, withoutFlag, withFlag) => {
    expect(codesOf(url, off)).toStrictEqual(withoutFlag);
    expect(codesOf(url, on)).toStrictEqual(withFlag);
  });

  it('returns the parsed URL when accepted and readable messages when refused', () => {
    const accepted = checkTargetUrl('https://hooks.example.com/in', off);
    expect(accepted.ok && accepted.url.hostname).toBe('hooks.example.com');
    const refused = checkTargetUrl('https://169.254.169.254/', off);
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.reasons[0]!.message).toContain('169.254.169.254');
  });
});

describe('checkResolvedAddress', () => {
  // [address, refused range without the flag (undefined: allowed), allowed with the flag]
  const table: Array<[string, string | undefined, boolean]> = [
    ['93.184.216.34', undefined, true],
    ['8.8.8.8', undefined, true],
    ['1.1.1.1', undefined, true],
    ['2606:4700:4700::1111', undefined, true],
    ['2a00:1450:4001:82b::200e', undefined, true],
    ['::ffff:8.8.8.8', undefined, true],
    ['64:ff9b::808:808', undefined, true],
    ['127.0.0.1', 'loopback', true],
    ['127.8.9.10', 'loopback', true],
    ['::1', 'loopback', true],
    ['10.0.0.1', 'private', false],
    ['10.255.255.255', 'private', false],
    ['172.16.0.1', 'private', false],
    ['172.31.255.254', 'private', false],
    ['192.168.0.1', 'private', false],
    ['169.254.169.254', 'linkLocal', false],
    ['169.254.0.1', 'linkLocal', false],
    ['100.64.0.1', 'carrierGradeNat', false],
    ['100.127.255.254', 'carrierGradeNat', false],
    ['0.0.0.0', 'unspecified', false],
    ['0.1.2.3', 'unspecified', false],
    ['255.255.255.255', 'broadcast', false],
    ['224.0.0.251', 'multicast', false],
    ['239.255.255.250', 'multicast', false],
    ['192.0.2.1', 'reserved', false],
    ['198.51.100.7', 'reserved', false],
    ['203.0.113.9', 'reserved', false],
    ['198.18.0.1', 'reserved', false],
    ['240.0.0.1', 'reserved', false],
    ['192.0.0.8', 'reserved', false],
    ['fd00::1', 'uniqueLocal', false],
    ['fc00::1', 'uniqueLocal', false],
    ['fe80::1', 'linkLocal', false],
    ['fe80::1%eth0', 'linkLocal', false],
    ['febf::1', 'linkLocal', false],
    ['ff02::1', 'multicast', false],
    ['::', 'unspecified', false],
    ['2001:db8::1', 'reserved', false],
    ['fec0::1', 'deprecatedSiteLocal', false],
    ['100::1', 'discard', false],
    ['::ffff:127.0.0.1', 'ipv4Mapped:loopback', false],
    ['::ffff:7f00:1', 'ipv4Mapped:loopback', false],
    ['::ffff:10.0.0.1', 'ipv4Mapped:private', false],
    ['::ffff:a00:1', 'ipv4Mapped:private', false],
    ['::ffff:169.254.169.254', 'ipv4Mapped:linkLocal', false],
    ['::ffff:100.64.0.1', 'ipv4Mapped:carrierGradeNat', false],
    ['::ffff:0.0.0.0', 'ipv4Mapped:unspecified', false],
    ['64:ff9b::a00:1', 'rfc6052:private', false],
    ['64:ff9b::7f00:1', 'rfc6052:loopback', false],
    ['64:ff9b::a9fe:a9fe', 'rfc6052:linkLocal', false],
    ['64:ff9b:1::808:808', 'rfc6052', false],
    ['::ffff:0:a00:1', 'rfc6145', false],
    ['2002:a00:1::1', '6to4', false],
    ['2002:808:808::1', '6to4', false],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'teredo', false],
    ['::7f00:1', 'ipv4Compatible', false],
    ['::a00:1', 'ipv4Compatible', false],
    ['4000::1', 'notGlobalUnicast', false],
    ['not-an-address', 'invalid', false],
    ['', 'invalid', false],
  ];

  it.each(table)('%s', (address, refusedRange, allowedWithFlag) => {
    const check = checkResolvedAddress(address, off);
    if (refusedRange === undefined) expect(check).toMatchObject({ ok: true });
    else expect(check).toStrictEqual({ ok: false, address, range: refusedRange });
    expect(checkResolvedAddress(address, on).ok).toBe(allowedWithFlag);
  });

  it('reports the family and the canonical form of an accepted address', () => {
    expect(checkResolvedAddress('8.8.8.8', off)).toStrictEqual({ ok: true, address: '8.8.8.8', family: 4 });
    expect(checkResolvedAddress('2606:4700:4700:0:0:0:0:1111', off)).toStrictEqual({ ok: true, address: '2606:4700:4700::1111', family: 6 });
  });
});

describe('resolveAndCheck', () => {
  function fakeLookup(answers: Record<string, ResolvedAddress[] | Error>) {
    const asked: Array<{ hostname: string; all: boolean }> = [];
    const lookup: LookupAll = async (hostname, options) => {
      asked.push({ hostname, all: options.all });
      const answer = answers[hostname];
      if (answer === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
      if (answer instanceof Error) throw answer;
      return answer;
    };
    return { resolver: createHostResolver({ lookup }), asked };
  }

  const v4 = (address: string): ResolvedAddress => ({ address, family: 4 });
  const v6 = (address: string): ResolvedAddress => ({ address, family: 6 });

  it('accepts a name whose every address is public, asks for all of them, and returns them to connect to', async () => {
    const { resolver, asked } = fakeLookup({ 'hooks.example.com': [v4('93.184.216.34'), v6('2606:2800:220:1:248:1893:25c8:1946')] });
    const check = await resolveAndCheck('hooks.example.com', { ...off, resolver });
    expect(check).toStrictEqual({ ok: true, addresses: [v4('93.184.216.34'), v6('2606:2800:220:1:248:1893:25c8:1946')] });
    expect(asked).toStrictEqual([{ hostname: 'hooks.example.com', all: true }]);
  });

  it('refuses when any one address is private, even if others are public', async () => {
    const { resolver } = fakeLookup({ 'mixed.example.com': [v4('93.184.216.34'), v4('10.0.0.5'), v6('2606:4700::1'), v6('fd12::1')] });
    const check = await resolveAndCheck('mixed.example.com', { ...off, resolver });
    expect(check).toMatchObject({
      ok: false,
      reason: 'forbidden-address',
      refused: [{ address: '10.0.0.5', range: 'private' }, { address: 'fd12::1', range: 'uniqueLocal' }],
    });
  });

  it('refuses a name that now resolves to the metadata address or a mapped private one', async () => {
    const { resolver } = fakeLookup({
      'rebind.example.com': [v4('169.254.169.254')],
      'mapped.example.com': [v6('::ffff:192.168.0.10')],
    });
    expect(await resolveAndCheck('rebind.example.com', { ...off, resolver })).toMatchObject({ ok: false, refused: [{ range: 'linkLocal' }] });
    expect(await resolveAndCheck('mapped.example.com', { ...off, resolver })).toMatchObject({ ok: false, refused: [{ range: 'ipv4Mapped:private' }] });
  });

  it('refuses loopback answers unless the flag is on', async () => {
    const { resolver } = fakeLookup({ 'dev.example.com': [v4('127.0.0.1'), v6('::1')], localhost: [v4('127.0.0.1'), v6('::1')] });
    expect(await resolveAndCheck('dev.example.com', { ...off, resolver })).toMatchObject({ ok: false, reason: 'forbidden-address' });
    expect(await resolveAndCheck('dev.example.com', { ...on, resolver })).toMatchObject({ ok: true });
    expect(await resolveAndCheck('localhost', { ...off, resolver })).toMatchObject({ ok: false, reason: 'forbidden-address' });
    expect(await resolveAndCheck('localhost', { ...on, resolver })).toStrictEqual({ ok: true, addresses: [v4('127.0.0.1'), v6('::1')] });
  });

  it('refuses *.localhost without asking DNS', async () => {
    const { resolver, asked } = fakeLookup({});
    expect(await resolveAndCheck('app.localhost', { ...on, resolver })).toMatchObject({ ok: false, reason: 'forbidden-address' });
    expect(asked).toStrictEqual([]);
  });

  it('checks IP literals (as URL.hostname gives them) without asking DNS', async () => {
    const { resolver, asked } = fakeLookup({});
    expect(await resolveAndCheck('[::ffff:a00:1]', { ...off, resolver })).toMatchObject({ ok: false, refused: [{ range: 'ipv4Mapped:private' }] });
    expect(await resolveAndCheck('8.8.8.8', { ...off, resolver })).toStrictEqual({ ok: true, addresses: [v4('8.8.8.8')] });
    expect(await resolveAndCheck('[::1]', { ...on, resolver })).toStrictEqual({ ok: true, addresses: [v6('::1')] });
    expect(asked).toStrictEqual([]);
  });

  it('answers unresolvable when the lookup fails or finds nothing', async () => {
    const { resolver } = fakeLookup({ 'empty.example.com': [], 'broken.example.com': Object.assign(new Error('timeout'), { code: 'EAI_AGAIN' }) });
    expect(await resolveAndCheck('missing.example.com', { ...off, resolver })).toMatchObject({ ok: false, reason: 'unresolvable', message: expect.stringContaining('ENOTFOUND') });
    expect(await resolveAndCheck('empty.example.com', { ...off, resolver })).toMatchObject({ ok: false, reason: 'unresolvable' });
    expect(await resolveAndCheck('broken.example.com', { ...off, resolver })).toMatchObject({ ok: false, reason: 'unresolvable', message: expect.stringContaining('EAI_AGAIN') });
    expect(await resolveAndCheck('', { ...off, resolver })).toMatchObject({ ok: false, reason: 'unresolvable' });
  });
});

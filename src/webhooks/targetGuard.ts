import ipaddr from 'ipaddr.js';
import type { HostResolver } from './hostResolver.js';

/**
 * Where a webhook may be delivered: public HTTPS addresses only. Checked twice: the URL when a
 * subscription is created or updated ({@link checkTargetUrl}, a 422 with the reasons, then
 * {@link resolveAndCheck} on a host name, within a short bound: subscriptions.ts), and every
 * resolved address right before each delivery ({@link resolveAndCheck}), because a name may resolve
 * to a private address later than it did at creation. Resolution and its cache: hostResolver.ts.
 *
 * Address classification is ipaddr.js's; everything it does not classify as `unicast` is refused
 * (private, loopback, link-local incl. 169.254.169.254, CGNAT, multicast, broadcast, reserved,
 * documentation, benchmarking, unspecified…). IPv6 must also lie in 2000::/3, the only block
 * allocated for global unicast. IPv4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::a.b.c.d)
 * addresses are judged by the IPv4 address they carry; 6to4, Teredo, the IPv4-translated
 * ::ffff:0:0:0/96 and the local-use NAT64 prefix 64:ff9b:1::/48 are refused whatever they carry.
 *
 * `allowLoopback` (WEBHOOK_ALLOW_LOOPBACK=1, local development and tests) admits loopback only:
 * `http://127.0.0.1`, `http://[::1]`, `http://localhost` (and their https forms), and, after
 * resolution, 127.0.0.0/8 and ::1.
 */

export interface TargetGuardOptions {
  allowLoopback: boolean;
}

export type TargetUrlProblemCode =
  | 'invalid-url'
  | 'https-required'
  | 'credentials-in-url'
  | 'fragment-in-url'
  | 'forbidden-address'
  | 'localhost-not-allowed';

export interface TargetUrlProblem {
  code: TargetUrlProblemCode;
  message: string;
}

export type TargetUrlCheck = { ok: true; url: URL } | { ok: false; reasons: TargetUrlProblem[] };

export type AddressCheck =
  | { ok: true; address: string; family: 4 | 6 }
  /** `range`: ipaddr.js's name for the refused range, prefixed by the carrier for embedded IPv4 (`ipv4Mapped:private`). */
  | { ok: false; address: string; range: string };

const LOOPBACK_LITERALS = new Set(['127.0.0.1', '::1']);
const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');
const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR('64:ff9b::/96');
const IPV4_COMPATIBLE = ipaddr.IPv6.parseCIDR('::/96');

/** A host name as a URL carries it: brackets of an IPv6 literal and a final root dot removed, lowercased. */
function bareHost(hostname: string): string {
  const host = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return (host.endsWith('.') ? host.slice(0, -1) : host).toLowerCase();
}

const isLocalhostName = (host: string): boolean => host === 'localhost' || host.endsWith('.localhost');

function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4 {
  const bytes = address.toByteArray().slice(12);
  return new ipaddr.IPv4(bytes);
}

/** 'unicast' when the address is a public one, else the name of the range that refuses it. */
function classify(address: ipaddr.IPv4 | ipaddr.IPv6): string {
  if (address.kind() === 'ipv4') return address.range();
  const v6 = address as ipaddr.IPv6;
  const range: string = v6.range();
  if (range === 'ipv4Mapped') return prefixed('ipv4Mapped', classify(v6.toIPv4Address()));
  if (range === 'rfc6052') return v6.match(NAT64_WELL_KNOWN) ? prefixed('rfc6052', classify(embeddedIPv4(v6))) : 'rfc6052';
  if (range !== 'unicast') return range;
  if (v6.match(IPV4_COMPATIBLE)) return 'ipv4Compatible';
  if (!v6.match(GLOBAL_UNICAST_V6)) return 'notGlobalUnicast';
  return 'unicast';
}

const prefixed = (carrier: string, inner: string): string => (inner === 'unicast' ? 'unicast' : `${carrier}:${inner}`);

function parseAddress(address: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  try {
    return ipaddr.parse(address);
  } catch {
    return undefined;
  }
}

/** The delivery-time check of one resolved address. */
export function checkResolvedAddress(address: string, { allowLoopback }: TargetGuardOptions): AddressCheck {
  const parsed = parseAddress(bareHost(address));
  if (parsed === undefined) return { ok: false, address, range: 'invalid' };
  const family = parsed.kind() === 'ipv4' ? 4 : 6;
  const range = classify(parsed);
  if (range === 'unicast' || (allowLoopback && range === 'loopback')) return { ok: true, address: parsed.toString(), family };
  return { ok: false, address, range };
}

/** The create/update check of a subscriber URL: every reason it is refused, or the parsed URL. */
export function checkTargetUrl(url: string, { allowLoopback }: TargetGuardOptions): TargetUrlCheck {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, reasons: [{ code: 'invalid-url', message: 'not an absolute URL' }] };
  }
  const reasons: TargetUrlProblem[] = [];
  // The WHATWG parser has already turned every IPv4 spelling (2130706433, 0x7f.1, 0177.0.0.1) into dotted decimal.
  const host = bareHost(parsed.hostname);
  const literal = parsed.hostname.startsWith('[') || ipaddr.IPv4.isValidFourPartDecimal(host) ? parseAddress(host) : undefined;
  const allowedLoopbackHost = allowLoopback && (host === 'localhost' || LOOPBACK_LITERALS.has(literal?.toString() ?? ''));

  if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && allowedLoopbackHost)) {
    reasons.push({
      code: 'https-required',
      message: allowLoopback
        ? 'the URL must use https (http only to 127.0.0.1, [::1] or localhost)'
        : 'the URL must use https',
    });
  }
  if (parsed.username !== '' || parsed.password !== '') {
    reasons.push({ code: 'credentials-in-url', message: 'the URL must not carry a user name or password' });
  }
  if (parsed.href.includes('#')) {
    reasons.push({ code: 'fragment-in-url', message: 'the URL must not have a fragment (#…)' });
  }
  if (literal !== undefined) {
    const range = classify(literal);
    if (range !== 'unicast' && !allowedLoopbackHost) {
      reasons.push({ code: 'forbidden-address', message: `the host ${parsed.hostname} is not a public address (${range})` });
    }
  } else if (isLocalhostName(host) && !allowedLoopbackHost) {
    reasons.push({ code: 'localhost-not-allowed', message: `the host ${parsed.hostname} names this machine` });
  }
  return reasons.length === 0 ? { ok: true, url: parsed } : { ok: false, reasons };
}

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** The shape of `dns.promises.lookup(hostname, { all: true })`, injectable for tests. */
export type LookupAll = (hostname: string, options: { all: true }) => Promise<ResolvedAddress[]>;

export interface ResolveAndCheckOptions extends TargetGuardOptions {
  /** The process's resolver, with its cache (hostResolver.ts). */
  resolver: HostResolver;
  /** How long this caller waits for an answer that is not cached; `unresolvable` (ETIMEOUT) after it. */
  timeoutMs?: number;
}

export type ResolveCheck =
  /** Connect to one of exactly these (pin them with the request's `lookup`): resolving again could answer differently. */
  | { ok: true; addresses: ResolvedAddress[] }
  /** `code`: the resolver's, ETIMEOUT when no answer came within `timeoutMs`. */
  | { ok: false; reason: 'unresolvable'; code: string; message: string }
  | { ok: false; reason: 'forbidden-address'; refused: Array<{ address: string; range: string }>; message: string };

/** Whether the host of a URL is a name to resolve (not an IP literal). */
export function isHostName(hostname: string): boolean {
  const host = bareHost(hostname);
  return host !== '' && parseAddress(host) === undefined;
}

/** Whether checking `hostname` would wait for a DNS answer: a name whose answer is not cached. */
export function awaitsResolution(hostname: string, resolver: HostResolver): boolean {
  return isHostName(hostname) && resolver.cached(bareHost(hostname)) === undefined;
}

/** Resolves every address of `hostname` and refuses when any one of them is not allowed. */
export async function resolveAndCheck(hostname: string, { allowLoopback, resolver, timeoutMs }: ResolveAndCheckOptions): Promise<ResolveCheck> {
  const host = bareHost(hostname);
  if (host === '') return { ok: false, reason: 'unresolvable', code: 'EBADNAME', message: 'empty host name' };

  let resolved: ResolvedAddress[];
  const literal = parseAddress(host);
  if (literal !== undefined) {
    resolved = [{ address: literal.toString(), family: literal.kind() === 'ipv4' ? 4 : 6 }];
  } else if (isLocalhostName(host) && !(allowLoopback && host === 'localhost')) {
    return { ok: false, reason: 'forbidden-address', refused: [{ address: hostname, range: 'loopback' }], message: `${hostname} names this machine` };
  } else {
    const resolution = await resolver.resolve(host, timeoutMs === undefined ? {} : { timeoutMs });
    if (!resolution.ok) {
      const message = ['ENODATA'].includes(resolution.code) ? `${hostname} resolved to no address (${resolution.code})` : `${hostname} did not resolve (${resolution.code})`;
      return { ok: false, reason: 'unresolvable', code: resolution.code, message };
    }
    resolved = resolution.addresses;
  }

  const refused: Array<{ address: string; range: string }> = [];
  const addresses: ResolvedAddress[] = [];
  for (const { address } of resolved) {
    const check = checkResolvedAddress(address, { allowLoopback });
    if (check.ok) addresses.push({ address: check.address, family: check.family });
    else refused.push({ address: check.address, range: check.range });
  }
  if (refused.length > 0) {
    return {
      ok: false,
      reason: 'forbidden-address',
      refused,
      message: `${hostname} resolves to a non-public address: ${refused.map((r) => `${r.address} (${r.range})`).join(', ')}`,
    };
  }
  return { ok: true, addresses };
}

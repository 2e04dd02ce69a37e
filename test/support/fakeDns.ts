// A DNS resolver of the shape dns.promises.Resolver has (resolve4/resolve6 with TTLs), answering
// from a table: what the webhook suites inject so that no test asks a real DNS server.
import ipaddr from 'ipaddr.js';
import type { DnsRecord, DnsResolver } from '../../src/webhooks/hostResolver.js';

/** What a name answers: its addresses (IPv4 and IPv6 mixed), an error code, or never. */
export type FakeDnsEntry = string[] | { addresses: string[]; ttl: number } | { code: string } | 'never' | { delayMs: number; addresses: string[] };

export interface FakeDns extends DnsResolver {
  /** Every query, `A name` or `AAAA name`, in order. */
  readonly asked: string[];
  /** Changes or adds an entry. */
  set(name: string, entry: FakeDnsEntry): void;
}

const DEFAULT_TTL = 60;

/** Names missing from the table do not exist (ENOTFOUND); `localhost` answers the loopback addresses unless the table says otherwise. */
export function fakeDnsResolver(table: Record<string, FakeDnsEntry> = {}): FakeDns {
  const entries = new Map<string, FakeDnsEntry>(Object.entries({ localhost: ['127.0.0.1', '::1'], ...table }));
  const asked: string[] = [];
  const answer = async (name: string, family: 4 | 6): Promise<DnsRecord[]> => {
    asked.push(`${family === 4 ? 'A' : 'AAAA'} ${name}`);
    const entry = entries.get(name);
    if (entry === undefined) throw Object.assign(new Error(`query${family === 4 ? 'A' : 'Aaaa'} ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
    if (entry === 'never') return new Promise(() => {});
    if ('code' in entry) throw Object.assign(new Error(`query ${entry.code} ${name}`), { code: entry.code });
    if ('delayMs' in entry) await new Promise((resolve) => setTimeout(resolve, entry.delayMs));
    const addresses = Array.isArray(entry) ? entry : entry.addresses;
    const ttl = Array.isArray(entry) || !('ttl' in entry) ? DEFAULT_TTL : entry.ttl;
    const records = addresses.filter((address) => (ipaddr.parse(address).kind() === 'ipv4') === (family === 4)).map((address) => ({ address, ttl }));
    if (records.length === 0) throw Object.assign(new Error(`query ENODATA ${name}`), { code: 'ENODATA' });
    return records;
  };
  return {
    asked,
    set: (name, entry) => void entries.set(name, entry),
    resolve4: (name) => answer(name, 4),
    resolve6: (name) => answer(name, 6),
  };
}

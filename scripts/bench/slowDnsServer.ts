// A DNS server on 127.0.0.1 (UDP) for the bench's webhook DNS phase: it answers A and AAAA
// questions from a table, each name after its own delay, so that the worker (pointed at it with
// WEBHOOK_DNS_SERVERS) meets names that resolve slowly or to refused addresses. Enough of RFC 1035
// for one question per query; AAAA questions get an empty answer (NODATA).
import { createSocket, type RemoteInfo } from 'node:dgram';
import type { AddressInfo } from 'node:net';

export interface SlowDnsEntry {
  /** IPv4 addresses answered to A questions. */
  addresses: string[];
  delayMs: number;
  ttl?: number;
}

export interface SlowDnsServer {
  /** `127.0.0.1:port`, as WEBHOOK_DNS_SERVERS takes it. */
  address: string;
  /** Queries received, per name. */
  queries: Map<string, number>;
  close(): Promise<void>;
}

function readName(message: Buffer, offset: number): { name: string; end: number } {
  const labels: string[] = [];
  let at = offset;
  while (message[at]! !== 0) {
    const length = message[at]!;
    labels.push(message.subarray(at + 1, at + 1 + length).toString('ascii'));
    at += 1 + length;
  }
  return { name: labels.join('.').toLowerCase(), end: at + 1 };
}

function answer(query: Buffer, entry: SlowDnsEntry | undefined, type: number, questionEnd: number): Buffer {
  const header = Buffer.from(query.subarray(0, 12));
  const question = query.subarray(12, questionEnd + 4);
  const records = entry && type === 1 ? entry.addresses : [];
  // QR=1, opcode and RD copied, RA=1; RCODE 3 (NXDOMAIN) for a name not in the table.
  header.writeUInt16BE(0x8000 | (query.readUInt16BE(2) & 0x7900) | 0x0080 | (entry ? 0 : 3), 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(records.length, 6);
  header.writeUInt16BE(0, 8);
  header.writeUInt16BE(0, 10);
  const answers = records.map((address) => {
    const record = Buffer.alloc(16);
    record.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
    record.writeUInt16BE(1, 2); // A
    record.writeUInt16BE(1, 4); // IN
    record.writeUInt32BE(entry!.ttl ?? 60, 6);
    record.writeUInt16BE(4, 10);
    address.split('.').forEach((part, index) => record.writeUInt8(Number(part), 12 + index));
    return record;
  });
  return Buffer.concat([header, question, ...answers]);
}

export async function startSlowDnsServer(table: Record<string, SlowDnsEntry>): Promise<SlowDnsServer> {
  const socket = createSocket('udp4');
  const queries = new Map<string, number>();
  const timers = new Set<NodeJS.Timeout>();
  socket.on('message', (query: Buffer, from: RemoteInfo) => {
    if (query.length < 17) return;
    const { name, end } = readName(query, 12);
    const type = query.readUInt16BE(end);
    queries.set(name, (queries.get(name) ?? 0) + 1);
    const entry = table[name];
    const timer = setTimeout(() => {
      timers.delete(timer);
      socket.send(answer(query, entry, type, end), from.port, from.address);
    }, entry?.delayMs ?? 0);
    timers.add(timer);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${(socket.address() as AddressInfo).port}`,
    queries,
    close: () =>
      new Promise((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        socket.close(() => resolve());
      }),
  };
}

// The address a request came from, as the limits per client address count it. Behind
// TRUST_PROXY reverse proxies, each of which appends the address it received the request from
// to X-Forwarded-For, the client is the entry that the outermost trusted proxy wrote: the
// TRUST_PROXY-th from the right, the connection's own address counted as the first (Express's
// `trust proxy` set to a number). Entries further left are whatever the client sent.
import type { IncomingMessage } from 'node:http';
import ipaddr from 'ipaddr.js';

/**
 * The client's address, normalised: IPv4-mapped IPv6 addresses as IPv4, and IPv6 addresses as
 * their /64 (one host is handed a whole /64 and can draw from it at will). `trustedProxies`
 * counts the reverse proxies in front of this server (0: the connection's address).
 */
export function clientAddress(req: IncomingMessage, trustedProxies: number): string {
  const socketAddress = req.socket.remoteAddress ?? 'unknown';
  if (trustedProxies <= 0) return normalised(socketAddress);
  const header = req.headers['x-forwarded-for'];
  const forwarded = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  const chain = [...forwarded, socketAddress];
  // Fewer entries than proxies: a request that reached a proxy nearer than the outermost; the leftmost is the best known.
  const chosen = chain[Math.max(0, chain.length - 1 - trustedProxies)]!;
  return ipaddr.isValid(chosen) ? normalised(chosen) : normalised(socketAddress);
}

function normalised(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16));
  return `${parts.join(':')}::/64`;
}

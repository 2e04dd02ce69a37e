// A real HTTP server on port 0 that answers like GitHub's REST API for what the connectors use:
// `GET /user` and `GET /repos/{owner}/{repo}/issues` (state filter, `per_page`/`page` paging with
// a `Link` header, pull requests listed among the issues, 404 for a repository it does not have).
// Tokens are accepted unless revoked (401); a test may make every answer an error status, a body
// that is not JSON, an error body that echoes the credential, or no answer at all (held until the
// server closes).
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface FakeIssue {
  id: number;
  number: number;
  title: string;
  state: 'open' | 'closed';
  /** Present (an object) on a pull request, as GitHub lists them among the issues. */
  pull_request?: { url: string };
}

export type GithubBehaviour =
  | { kind: 'normal' }
  | { kind: 'status'; status: number; body?: string }
  | { kind: 'raw'; body: string }
  | { kind: 'hold' }
  | { kind: 'next-link-elsewhere' }
  /**
   * An error status whose body echoes the credential it was sent, as some upstreams do (the
   * Authorization header, the bare token, `token=…`), followed by the `planted` secrets: what the
   * log must never show.
   */
  | { kind: 'echo-credentials'; status: number; planted?: string[] };

export interface GithubRequest {
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
}

export interface GithubApiServer {
  /** Configure as GITHUB_API_BASE_URL. */
  baseUrl: string;
  requests: GithubRequest[];
  /** Issues (and pull requests) of a repository, most recently updated first. */
  setRepository(repository: string, items: FakeIssue[]): void;
  revokeToken(token: string): void;
  /** The `GitHub-Authentication-Token-Expiration` header of GET /user for this token. */
  announceExpiry(token: string, header: string): void;
  respondWith(behaviour: GithubBehaviour): void;
  close(): Promise<void>;
}

/** GitHub's issue ids are unique across repositories: each call of makeIssues gets new ones unless told. */
let nextIssueId = 1000;

export function makeIssues(count: number, options: { firstId?: number; state?: 'open' | 'closed'; title?: (n: number) => string } = {}): FakeIssue[] {
  const firstId = options.firstId ?? nextIssueId;
  nextIssueId = Math.max(nextIssueId, firstId + count);
  return Array.from({ length: count }, (_, index) => ({
    id: firstId + index,
    number: index + 1,
    title: options.title ? options.title(index + 1) : `Issue ${index + 1}`,
    state: options.state ?? 'open',
  }));
}

export async function startGithubApiServer(): Promise<GithubApiServer> {
  const repositories = new Map<string, FakeIssue[]>();
  const revoked = new Set<string>();
  const expiries = new Map<string, string>();
  const requests: GithubRequest[] = [];
  const sockets = new Set<Socket>();
  let behaviour: GithubBehaviour = { kind: 'normal' };
  let baseUrl = '';

  const json = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
    response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers }).end(JSON.stringify(body));

  const server = createServer((incoming, response) => {
    const url = new URL(incoming.url ?? '/', 'http://github.test');
    requests.push({ path: url.pathname, query: url.searchParams, headers: incoming.headers });
    if (behaviour.kind === 'hold') return;
    if (behaviour.kind === 'status') return void response.writeHead(behaviour.status, { 'content-type': 'application/json' }).end(behaviour.body ?? '{"message":"Server Error"}');
    if (behaviour.kind === 'echo-credentials') {
      const sent = incoming.headers.authorization ?? '';
      const bare = sent.replace(/^Bearer /, '');
      return void response.writeHead(behaviour.status, { 'content-type': 'application/json' }).end(
        JSON.stringify({ message: `Refused ${sent}; token=${bare} (${bare})`, echoed: [...(behaviour.planted ?? [])] }),
      );
    }
    if (behaviour.kind === 'raw') return void response.writeHead(200, { 'content-type': 'application/json' }).end(behaviour.body);
    const token = /^Bearer (.+)$/.exec(incoming.headers.authorization ?? '')?.[1];
    if (token === undefined || revoked.has(token)) return json(response, 401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' });
    if (url.pathname === '/user') {
      const expiry = expiries.get(token);
      return json(response, 200, { login: `login-${token.slice(-4)}`, id: 1 }, expiry ? { 'github-authentication-token-expiration': expiry } : {});
    }
    const match = /^\/repos\/([^/]+)\/([^/]+)\/issues$/.exec(url.pathname);
    const items = match ? repositories.get(`${decodeURIComponent(match[1]!)}/${decodeURIComponent(match[2]!)}`) : undefined;
    if (!items) return json(response, 404, { message: 'Not Found' });
    const state = url.searchParams.get('state') ?? 'open';
    const listed = state === 'all' ? items : items.filter((item) => item.state === state);
    const perPage = Math.min(100, Number(url.searchParams.get('per_page') ?? 30));
    const page = Number(url.searchParams.get('page') ?? 1);
    const last = Math.max(1, Math.ceil(listed.length / perPage));
    const pageUrl = (number: number) => {
      const next = new URL(`${behaviour.kind === 'next-link-elsewhere' ? 'http://elsewhere.example' : baseUrl}${url.pathname}`);
      for (const [name, value] of url.searchParams) if (name !== 'page') next.searchParams.set(name, value);
      next.searchParams.set('page', String(number));
      return next.href;
    };
    const links = page < last ? [`<${pageUrl(page + 1)}>; rel="next"`, `<${pageUrl(last)}>; rel="last"`] : [`<${pageUrl(1)}>; rel="first"`];
    const body = listed.slice((page - 1) * perPage, page * perPage).map((item) => ({ ...item, body: 'Long text '.repeat(20), user: { login: 'someone' } }));
    return json(response, 200, body, { link: links.join(', ') });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    baseUrl,
    requests,
    setRepository: (repository, items) => void repositories.set(repository, items),
    revokeToken: (token) => void revoked.add(token),
    announceExpiry: (token, header) => void expiries.set(token, header),
    respondWith: (next) => {
      behaviour = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

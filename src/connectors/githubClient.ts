// A client of the parts of GitHub's REST API the connectors use: `GET /user` (is this token
// accepted, and whose is it) and `GET /repos/{owner}/{repo}/issues` (pages followed through the
// `Link` header). It trusts nothing it gets back: answers are checked, bounded in size, and a
// `next` link that leaves the configured API origin is refused, so the token is never sent
// anywhere else. Failures carry the upstream's words for the log only, scrubbed of the token
// that was sent (GitHub's error bodies may echo it) and of any other credential shape.
import { scrubText } from '../logScrubber.js';
import { readBodyAtMost } from '../responseBody.js';

export interface GithubClientOptions {
  /** e.g. `https://api.github.com` (no trailing slash). */
  baseUrl: string;
  /** One request (connect, send, whole answer) must end within this time. */
  timeoutMs: number;
}

/** What the API version header asks for: the REST API version these calls are written against. */
export const GITHUB_API_VERSION = '2022-11-28';
/** Issues per page: GitHub's maximum. */
const PAGE_SIZE = 100;
/** A page of 100 issues with long bodies stays well below this; anything larger is refused as malformed. */
const MAX_ANSWER_BYTES = 8 * 1024 * 1024;
const LOGGED_BODY_CHARACTERS = 300;

export type GithubFailureKind = 'unauthorized' | 'not-found' | 'status' | 'malformed-answer' | 'unreachable' | 'timeout';

/** A failed GitHub call. `message` and `cause` may hold GitHub's words and address: for the log only. */
export class GithubFailure extends Error {
  override readonly name = 'GithubFailure';
  constructor(
    readonly kind: GithubFailureKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export interface GithubAccount {
  login: string;
  /** The token's expiry as GitHub announces it (`GitHub-Authentication-Token-Expiration`), or null. */
  tokenExpiresAt: number | null;
}

export interface GithubIssue {
  id: number;
  number: number;
  title: string;
  state: 'open' | 'closed';
}

export interface GithubIssuePage {
  issues: GithubIssue[];
  pullRequestsSkipped: number;
  /** Issues and pull requests read, at most `maxItems`. */
  itemsRead: number;
  /** More items were listed than `maxItems`. */
  truncated: boolean;
}

export interface GithubClient {
  account(token: string): Promise<GithubAccount>;
  /** Open (or all) issues of `owner/name`, most recently updated first, at most `maxItems` issues and pull requests read. */
  issues(token: string, repository: string, state: 'open' | 'all', maxItems: number): Promise<GithubIssuePage>;
}

export function createGithubClient(options: GithubClientOptions): GithubClient {
  const base = options.baseUrl.replace(/\/+$/, '');
  const origin = new URL(base).origin;

  async function get(url: string, token: string): Promise<{ body: unknown; headers: Headers }> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), options.timeoutMs);
    try {
      let response: Response;
      try {
        response = await fetch(url, {
          headers: {
            accept: 'application/vnd.github+json',
            authorization: `Bearer ${token}`,
            'x-github-api-version': GITHUB_API_VERSION,
            'user-agent': 'ContractApiServer-Connectors/1.0',
          },
          signal: controller.signal,
          redirect: 'manual',
        });
      } catch (error) {
        if (controller.signal.aborted) throw new GithubFailure('timeout', `no answer from ${url} within ${options.timeoutMs} ms`);
        throw new GithubFailure('unreachable', `${url} could not be reached`, { cause: error });
      }
      const body = await readBodyAtMost(response, MAX_ANSWER_BYTES).catch((error: unknown) => {
        if (controller.signal.aborted) throw new GithubFailure('timeout', `the answer of ${url} did not end within ${options.timeoutMs} ms`);
        throw new GithubFailure('unreachable', `the answer of ${url} broke off`, { cause: error });
      });
      const text = body?.toString('utf8');
      if (response.status === 401) throw new GithubFailure('unauthorized', `${url} answered 401`);
      if (response.status === 404) throw new GithubFailure('not-found', `${url} answered 404`);
      if (response.status !== 200) {
        throw new GithubFailure('status', `${url} answered ${response.status}: ${text === undefined ? '(over the size limit)' : scrubText(text, [token]).slice(0, LOGGED_BODY_CHARACTERS)}`);
      }
      if (text === undefined) throw new GithubFailure('malformed-answer', `the answer of ${url} is over ${MAX_ANSWER_BYTES} bytes`);
      try {
        return { body: JSON.parse(text) as unknown, headers: response.headers };
      } catch (error) {
        throw new GithubFailure('malformed-answer', `the answer of ${url} is not JSON`, { cause: error });
      }
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    async account(token) {
      const { body, headers } = await get(`${base}/user`, token);
      if (!isObject(body) || typeof body.login !== 'string' || body.login === '') {
        throw new GithubFailure('malformed-answer', 'GET /user answered no login');
      }
      return { login: body.login, tokenExpiresAt: announcedExpiry(headers.get('github-authentication-token-expiration')) };
    },

    async issues(token, repository, state, maxItems) {
      const [owner, name] = repository.split('/') as [string, string];
      // `.` and `..` name no repository; sent, they would walk the URL out of /repos and take the token elsewhere.
      if ([owner, name].some((segment) => segment === '.' || segment === '..')) throw new GithubFailure('not-found', `${repository} is no repository name`);
      let url: string | undefined =
        `${base}/repos/${encodeURIComponent(owner)}/${encodeURIComponent(name)}/issues?state=${state}&sort=updated&direction=desc&per_page=${PAGE_SIZE}`;
      const issues: GithubIssue[] = [];
      let pullRequestsSkipped = 0;
      let itemsRead = 0;
      while (url !== undefined) {
        const { body, headers } = await get(url, token);
        if (!Array.isArray(body)) throw new GithubFailure('malformed-answer', `the issues of ${repository} are not a list`);
        for (const item of body) {
          if (itemsRead === maxItems) return { issues, pullRequestsSkipped, itemsRead, truncated: true };
          itemsRead += 1;
          if (isObject(item) && item.pull_request !== undefined && item.pull_request !== null) {
            pullRequestsSkipped += 1;
            continue;
          }
          issues.push(issueOf(item));
        }
        url = nextLink(headers.get('link'));
        if (url !== undefined && new URL(url).origin !== origin) {
          throw new GithubFailure('malformed-answer', `the next page of ${repository} is on another origin (${new URL(url).origin})`);
        }
        if (url !== undefined && itemsRead === maxItems) return { issues, pullRequestsSkipped, itemsRead, truncated: true };
      }
      return { issues, pullRequestsSkipped, itemsRead, truncated: false };
    },
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function issueOf(item: unknown): GithubIssue {
  if (
    !isObject(item) ||
    !Number.isSafeInteger(item.id) ||
    !Number.isSafeInteger(item.number) ||
    typeof item.title !== 'string' ||
    (item.state !== 'open' && item.state !== 'closed')
  ) {
    throw new GithubFailure('malformed-answer', 'an issue lacks its id, number, title or state');
  }
  return { id: item.id as number, number: item.number as number, title: item.title, state: item.state };
}

/** The `rel="next"` target of an RFC 8288 Link header, if any. */
export function nextLink(header: string | null): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(',')) {
    const match = /^\s*<([^>]*)>\s*;(.*)$/.exec(part);
    if (match && /(?:^|;)\s*rel="?(?:[^";]*\s)?next(?:\s[^";]*)?"?\s*(?:;|$)/.test(match[2]!)) return match[1];
  }
  return undefined;
}

/** `2026-12-31 23:59:59 UTC` or `2026-12-31 15:59:59 -0800`, as GitHub writes it; null when absent or unreadable. */
function announcedExpiry(header: string | null): number | null {
  const match = header ? /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}) (UTC|[+-]\d{4})$/.exec(header.trim()) : null;
  if (!match) return null;
  const offset = match[3] === 'UTC' ? 'Z' : `${match[3]!.slice(0, 3)}:${match[3]!.slice(3)}`;
  const at = Date.parse(`${match[1]}T${match[2]}${offset}`);
  return Number.isNaN(at) ? null : at;
}

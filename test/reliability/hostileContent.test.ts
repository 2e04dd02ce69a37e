// Hostile content in a portfolio import: every string member is HTML (sanitized), an address
// (http, https, mailto) or plain text (markup refused). Checked with a corpus of known XSS vectors
// on every member of a complete document, and on what the real server then serves.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { avaMorenoPortfolio } from '../../src/demo/avaMoreno.js';
import { exportPortfolio, importPortfolio } from '../../src/portfolio/import/importPortfolio.js';
import { validatePortfolioDocument } from '../../src/portfolio/import/validateImport.js';
import { makeDatabase, makeTenant } from '../store/factories.js';
import { bearer, startTestApp, type TestApp } from '../support/testApp.js';
import { executableMarkup, xssVectors } from './fixtures/xssVectors.js';

type Json = string | number | boolean | null | Json[] | { [member: string]: Json };

const HTML_MEMBERS = new Set(['bodyHtml', 'html']);

/** Every string of the document with its JSON pointer, told apart into HTML members and the rest. */
function stringMembers(value: Json, path = ''): { path: string; html: boolean }[] {
  if (typeof value === 'string') return [{ path, html: HTML_MEMBERS.has(path.split('/').at(-1) ?? '') }];
  if (Array.isArray(value)) return value.flatMap((item, index) => stringMembers(item, `${path}/${index}`));
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).flatMap(([member, item]) => stringMembers(item, `${path}/${member.replaceAll('~', '~0').replaceAll('/', '~1')}`));
  }
  return [];
}

function setAt(document: Json, path: string, text: string): void {
  const tokens = path.split('/').slice(1);
  let node = document as Record<string, Json>;
  for (const token of tokens.slice(0, -1)) node = node[token] as Record<string, Json>;
  node[tokens.at(-1)!] = text;
}

/** The demo portfolio as export prints it: every optional member present. */
async function completeDocument(): Promise<Json> {
  const t = makeDatabase();
  try {
    const tenantId = await makeTenant(t.db);
    await importPortfolio(t.db, tenantId, avaMorenoPortfolio);
    return (await exportPortfolio(t.db, tenantId)) as unknown as Json;
  } finally {
    t.cleanup();
  }
}

const document = await completeDocument();
const members = stringMembers(document);
const plainText = members.filter((member) => !member.html).map((member) => member.path);
const html = members.filter((member) => member.html).map((member) => member.path);

it('has a detector that sees the vectors as they are (so its silence below means something)', () => {
  // Only the protocol-relative link runs no script of its own.
  expect(xssVectors.filter((vector) => executableMarkup(vector).length === 0)).toEqual(['<a href="//evil.example/">protocol-relative</a>']);
});

describe('plain-text members', () => {
  it('are found in every part of the document (profile, lists, page blocks)', () => {
    for (const expected of ['/profile/name', '/posts/0/title', '/links/0/label', '/testimonials/0/quote']) expect(plainText).toContain(expected);
    const blockMembers = plainText.filter((path) => /^\/pages\/\d+\/blocks\/\d+\/(text|caption|attribution|label)$/.test(path)).map((path) => path.split('/').at(-1));
    expect(new Set(blockMembers)).toEqual(new Set(['text', 'caption', 'attribution', 'label']));
    expect(plainText.length).toBeGreaterThan(100);
  });

  it.each(xssVectors.map((vector) => [vector]))('refuse %s in every one of them, naming each path', (vector) => {
    const hostile = structuredClone(document);
    for (const path of plainText) setAt(hostile, path, vector);
    const refused = new Set(validatePortfolioDocument(hostile).map((problem) => problem.path));
    expect(plainText.filter((path) => !refused.has(path))).toEqual([]);
  });

  it('keep a "<" that starts no tag, as in "a < b" or "<3"', () => {
    const friendly = structuredClone(document);
    setAt(friendly, '/profile/name', 'Ava <3 Moreno');
    setAt(friendly, '/posts/0/title', 'When 2 < 3 and 5 > 4');
    expect(validatePortfolioDocument(friendly)).toEqual([]);
  });
});

describe('HTML members and what the server serves', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t?.close());

  it('store and serve no executable markup when every HTML member holds every vector', async () => {
    expect(html.length).toBeGreaterThanOrEqual(3);
    const hostile = structuredClone(document);
    const allVectors = xssVectors.join('\n');
    for (const path of html) setAt(hostile, path, allVectors);
    await importPortfolio(t.db, t.fixture.portfolio.tenantId, hostile);

    const stored = (await exportPortfolio(t.db, t.fixture.portfolio.tenantId)) as unknown as Json;
    for (const path of html) {
      const value = path.split('/').slice(1).reduce<Json>((node, token) => (node as Record<string, Json>)[token]!, stored) as string;
      expect(executableMarkup(value), path).toEqual([]);
    }

    const key = bearer(t.fixture.portfolio.apiKey);
    const served = [
      (await t.client.get('/api/v1/portfolio', key)).body,
      (await t.client.get('/api/v1/posts?limit=50', key)).body,
      (await t.client.get('/api/v1/pages?limit=50', key)).body,
    ];
    const slug = (hostile as { pages: { slug: string; published: boolean }[] }).pages.find((page) => page.published)!.slug;
    served.push((await t.client.get(`/api/v1/pages/${slug}`, key)).body);
    expect(served.flatMap((body) => stringMembers(body as Json)).length).toBeGreaterThan(100);
    for (const body of served) {
      for (const { path } of stringMembers(body as Json)) {
        const value = path.split('/').slice(1).reduce<Json>((node, token) => (node as Record<string, Json>)[token]!, body as Json) as string;
        expect(executableMarkup(value), path).toEqual([]);
      }
    }
  });
});

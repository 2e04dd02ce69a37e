import { describe, expect, it } from 'vitest';
import { bearer, type TestApp, useTestApp } from '../support/testApp.js';

let t: TestApp;
let portfolio: Record<string, unknown>;
useTestApp(async (app) => {
  t = app;
  portfolio = (await get('/api/v1/portfolio')).body;
});
const get = (path: string) => t.client.get(path, bearer(t.fixture.portfolio.apiKey));

describe('page blocks', () => {
  it('resolve every asset to an object with url, alt text, MIME type and dimensions', async () => {
    const kindsSeen = new Set<string>();
    let assetsSeen = 0;
    for (const slug of t.fixture.portfolio.published.pages) {
      const page = (await get(`/api/v1/pages/${slug}`)).body;
      for (const block of page.blocks) {
        kindsSeen.add(block.type);
        const assets = block.type === 'image' ? [block.image] : block.type === 'gallery' ? block.images : [];
        for (const asset of assets) {
          assetsSeen += 1;
          expect(asset).toEqual({
            id: expect.stringMatching(/^ast_/),
            url: expect.stringMatching(/^https?:\/\//),
            altText: expect.any(String),
            mimeType: expect.stringMatching(/^[a-z]+\/[a-z0-9.+-]+$/),
            width: expect.toSatisfy((value: unknown) => value === null || (Number.isInteger(value) && (value as number) > 0)),
            height: expect.toSatisfy((value: unknown) => value === null || (Number.isInteger(value) && (value as number) > 0)),
          });
        }
      }
    }
    expect(assetsSeen).toBeGreaterThan(0);
    expect([...kindsSeen]).toEqual(expect.arrayContaining(['heading', 'richText', 'image', 'gallery']));
  });

  it('carry no script, event handler, frame or unsafe URL anywhere in the served portfolio', async () => {
    const documents = [JSON.stringify(portfolio)];
    for (const slug of t.fixture.portfolio.published.pages) documents.push((await get(`/api/v1/pages/${slug}`)).text);
    for (const slug of t.fixture.portfolio.published.posts) documents.push((await get(`/api/v1/posts/${slug}`)).text);
    for (const text of documents) {
      expect(text).not.toMatch(/<script|<iframe|<object|<embed|<svg|<math|<style|<form|<base|<meta/i);
      expect(text).not.toMatch(/\son[a-z]+\s*=/i);
      // Unsafe schemes in any attribute value (the posts may mention "javascript:" in their text).
      expect(text).not.toMatch(/=\\?["']?\s*(javascript|vbscript|data):/i);
      expect(text).not.toMatch(/"url":"(javascript|vbscript|data):/i);
    }
  });
});

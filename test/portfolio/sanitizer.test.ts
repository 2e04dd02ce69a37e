import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { importPortfolio } from '../../src/portfolio/import/importPortfolio.js';
import { PortfolioImportError } from '../../src/portfolio/import/validateImport.js';
import { sanitizeHtml } from '../../src/portfolio/sanitizeHtml.js';
import { makeDatabase, makeDocument, makeTenant, publishedReads, type TempDatabase } from '../store/factories.js';

const rel = 'rel="nofollow noopener noreferrer"';

/** [name, source HTML, exact sanitized output] */
const vectors: [string, string, string][] = [
  ['script tag', '<p>hi<script>alert(1)</script></p>', '<p>hi</p>'],
  ['script tag in upper case with attributes', '<SCRIPT type="text/javascript" src="https://evil.example/x.js"></SCRIPT><p>ok</p>', '<p>ok</p>'],
  ['event handler on an image', '<img src="https://img.example/a.png" onerror="alert(1)">', '<img src="https://img.example/a.png" alt="" />'],
  ['event handler on a paragraph and a link', '<p onclick="alert(1)"><a href="https://ok.example/" onmouseover="alert(2)">x</a></p>', `<p><a href="https://ok.example/" ${rel}>x</a></p>`],
  ['javascript: link in mixed case', '<a href="JaVaScRiPt:alert(1)">x</a>', `<a ${rel}>x</a>`],
  ['javascript: link, decimal entities', '<a href="&#106;&#97;vascript:alert(1)">x</a>', `<a ${rel}>x</a>`],
  ['javascript: link, hex entities and &colon;', '<a href="&#x6A;avascript&colon;alert(1)">x</a>', `<a ${rel}>x</a>`],
  ['javascript: link with leading whitespace and an embedded tab', '<a href=" java\tscript:alert(1)">x</a>', `<a ${rel}>x</a>`],
  ['javascript: link with a control character', '<a href="\u0001javascript:alert(1)">x</a>', `<a ${rel}>x</a>`],
  ['javascript: link with an embedded newline entity', '<a href="java&#10;script:alert(1)">x</a>', `<a ${rel}>x</a>`],
  ['data: URL in a link', '<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">x</a>', `<a ${rel}>x</a>`],
  ['data: URL in an image', '<img src="data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+">', ''],
  ['javascript: URL in an image', '<img src="javascript:alert(1)" alt="x">', ''],
  ['iframe with srcdoc', '<iframe src="https://evil.example/" srcdoc="<script>alert(1)</script>">inner</iframe>', ''],
  ['object and embed', '<object data="https://evil.example/x.swf"><embed src="https://evil.example/x.swf"></object><p>after</p>', '<p>after</p>'],
  ['SVG with onload and a script', '<svg onload="alert(1)"><script>alert(2)</script><text>t</text></svg>', ''],
  ['MathML with a javascript: link', '<math><mi xlink:href="javascript:alert(1)">x</mi></math>', ''],
  ['style attribute with url(javascript:) and expression()', '<p style="background:url(javascript:alert(1))">s</p><div style="width: expression(alert(1))">d</div>', '<p>s</p>d'],
  ['style element', '<style>body{background:url(javascript:alert(1))}</style><p>x</p>', '<p>x</p>'],
  ['formaction on a button in a form', '<form action="https://evil.example/"><button formaction="javascript:alert(1)">b</button><input name="q"></form>', 'b'],
  ['meta refresh', '<meta http-equiv="refresh" content="0;url=javascript:alert(1)"><p>x</p>', '<p>x</p>'],
  ['base href', '<base href="https://evil.example/"><a href="https://ok.example/">x</a>', `<a href="https://ok.example/" ${rel}>x</a>`],
  ['protocol-relative link and image', '<a href="//evil.example/x">p</a><img src="//evil.example/x.png">', `<a ${rel}>p</a>`],
  ['backslash protocol-relative link', '<a href="/\\evil.example">p</a>', `<a ${rel}>p</a>`],
  ['vbscript: link', '<a href="vbscript:msgbox(1)">x</a>', `<a ${rel}>x</a>`],
  ['class, id and unknown attributes', '<p class="x" id="y" data-x="1" aria-hidden="true">t</p>', '<p>t</p>'],
  ['target on a link (reverse tabnabbing)', '<a href="https://ok.example/" target="_blank" rel="opener">x</a>', `<a href="https://ok.example/" ${rel}>x</a>`],
  ['textarea, noscript and template contents', '<textarea><img src=x onerror=alert(1)></textarea><noscript><p title="</noscript><img src=x onerror=alert(1)>"></p></noscript><template><script>alert(1)</script></template>ok', 'ok'],
  ['escaped text stays escaped', '<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>', '<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>'],
];

/** Patterns none of which may appear in anything stored or served. */
const forbidden = [
  /<script/i,
  /javascript/i,
  /vbscript/i,
  /\bon[a-z]+\s*=/i,
  /<iframe/i,
  /srcdoc/i,
  /<object/i,
  /<embed/i,
  /<svg/i,
  /<math/i,
  /style\s*=/i,
  /<style/i,
  /expression\(/i,
  /formaction/i,
  /<form/i,
  /<meta/i,
  /<base/i,
  /data:/i,
  /href="\/\//i,
  /src="\/\//i,
  /target=/i,
];

describe('sanitizeHtml', () => {
  it('has a table of at least 15 vectors', () => {
    expect(vectors.length).toBeGreaterThanOrEqual(15);
  });

  it.each(vectors)('removes %s', (_name, source, expected) => {
    const output = sanitizeHtml(source);
    expect(output).toBe(expected);
    for (const pattern of forbidden) expect(output).not.toMatch(pattern);
  });

  it.each(vectors)('is idempotent on %s', (_name, source) => {
    const once = sanitizeHtml(source);
    expect(sanitizeHtml(once)).toBe(once);
  });

  it('keeps the allowlisted formatting, links and images', () => {
    const html = [
      '<h2>Heading</h2><h3>h3</h3><h6>h6</h6>',
      '<p><strong>b</strong> <em>i</em> <b>b</b> <i>i</i> <u>u</u> <s>s</s> <code>c</code></p>',
      '<pre><code>x &lt; y</code></pre><blockquote>q</blockquote><hr />',
      '<ul><li>a</li></ul><ol><li>b</li></ol>',
      `<p><a href="https://ok.example/a?b=1&amp;c=2" title="T" ${rel}>l</a> <a href="mailto:me@example.com" ${rel}>m</a><br />x</p>`,
      '<figure><img src="https://img.example/a.png" alt="A" width="640" height="480" /><figcaption>c</figcaption></figure>',
      '<table><thead><tr><th scope="col">h</th></tr></thead><tbody><tr><td colspan="2">d</td></tr></tbody></table>',
    ].join('');
    expect(sanitizeHtml(html)).toBe(html);
  });

  it('turns h1 into h2 and drops non-numeric image dimensions', () => {
    expect(sanitizeHtml('<h1>Title</h1>')).toBe('<h2>Title</h2>');
    expect(sanitizeHtml('<img src="https://img.example/a.png" width="100%" height="50px">')).toBe('<img src="https://img.example/a.png" alt="" />');
  });
});

describe('sanitizing at import', () => {
  let t: TempDatabase;
  beforeEach(() => {
    t = makeDatabase();
  });
  afterEach(() => t.cleanup());

  it('leaves none of the vectors in the stored source, rendered JSON, page summaries or document JSON', async () => {
    const tenantId = await makeTenant(t.db);
    const everything = vectors.map(([, source]) => source).join('\n');
    const document = makeDocument({
      outcomes: [{ slug: 'o', published: true, title: 'O', summary: 's', bodyHtml: everything }],
      posts: [
        { slug: 'p', published: true, title: 'P', excerpt: 'e', bodyHtml: everything, publishedAt: '2025-01-01T00:00:00Z' },
        { slug: 'q', published: false, title: 'Q', excerpt: 'e', bodyHtml: everything, publishedAt: '2025-01-01T00:00:00Z' },
      ],
      pages: [{ slug: 'x', published: true, title: 'X', blocks: [{ type: 'richText', html: everything }, { type: 'heading', level: 2, text: 'plain' }] }],
    });
    await importPortfolio(t.db, tenantId, document, Date.now);

    const stored = t.db
      .prepare(
        `SELECT source_json AS text FROM portfolio_items UNION ALL SELECT rendered_json FROM portfolio_items
         UNION ALL SELECT summary_json FROM portfolio_items WHERE summary_json IS NOT NULL
         UNION ALL SELECT document_json FROM portfolios UNION ALL SELECT profile_rendered_json FROM portfolios`,
      )
      .pluck()
      .all() as string[];
    expect(stored.length).toBeGreaterThan(10);
    for (const text of stored) {
      const html = JSON.parse(text) as unknown; // decode JSON escapes such as \u003c before matching
      const flat = JSON.stringify(html).replace(/\\"/g, '"');
      for (const pattern of forbidden) expect(flat, `${pattern} in ${flat.slice(0, 200)}`).not.toMatch(pattern);
    }

    const reads = publishedReads(t.db);
    const post = await reads.bySlug(tenantId, 'post', 'p');
    expect(post?.bodyHtml).toBe(sanitizeHtml(everything));
    expect(post?.bodyHtml).toContain('<p>hi</p>');
    const page = await reads.bySlug(tenantId, 'page', 'x');
    expect(page?.blocks[0]).toEqual({ type: 'richText', html: sanitizeHtml(everything) });
    expect((await reads.document(tenantId))?.outcomes[0]?.bodyHtml).toBe(sanitizeHtml(everything));
  });

  it('stores plain text as given, but refuses markup in it (a "<" that starts a tag)', async () => {
    const tenantId = await makeTenant(t.db);
    await importPortfolio(
      t.db,
      tenantId,
      makeDocument({ pages: [{ slug: 'x', published: true, title: 'Tom & Jerry', blocks: [{ type: 'heading', level: 2, text: 'Tom & Jerry <3' }] }] }),
      Date.now,
    );
    const page = await publishedReads(t.db).bySlug(tenantId, 'page', 'x');
    expect(page?.title).toBe('Tom & Jerry');
    expect(page?.blocks[0]).toEqual({ type: 'heading', level: 2, text: 'Tom & Jerry <3' });
    await expect(importPortfolio(t.db, tenantId, makeDocument({ pages: [{ slug: 'x', published: true, title: 'A <b>title</b>', blocks: [] }] }), Date.now),
    ).rejects.toThrow(PortfolioImportError);
  });
});

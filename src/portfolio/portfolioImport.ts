// Import and export of a tenant's whole portfolio in the documented import format
// (specs/portfolio/import-format.schema.json). An import validates the document (schema, then the
// rules a schema cannot express), normalizes it (defaults, generated ids, sanitized HTML), renders
// every item exactly as the API returns it, and replaces the tenant's portfolio in one
// transaction. Reads then only select and parse precomputed JSON.
import { readFileSync } from 'node:fs';
import type BetterSqlite3 from 'better-sqlite3';
import type { ValidateFunction } from 'ajv';
import { createAjv2020 } from '../contract/ajv.js';
import { asc, eq, sql } from 'drizzle-orm';
import { assets, portfolioItems, portfolios, tenants, type PortfolioItemKind } from '../../db/schema.js';
import { drizzleFor } from '../store/drizzle.js';
import { StoreError } from '../store/errors.js';
import { defaultRandomBytes, newId, type RandomBytes } from '../store/ids.js';
import type {
  Asset,
  Award,
  Credential,
  ExperienceEntry,
  Link,
  OutcomeItem,
  PageBlock,
  PageItem,
  PageSummary,
  PortfolioResponse,
  PostItem,
  ProfileItem,
  Skill,
  Stat,
  Testimonial,
} from '../store/portfolioShapes.js';
import type {
  BlockInput,
  ImportAsset,
  ImportBlock,
  ImportPage,
  PortfolioDocument,
  PortfolioDocumentInput,
} from './importFormat.js';
import { sanitizeHtml } from './sanitizeHtml.js';
import { escapePointerToken } from '../contract/jsonPointer.js';
import { validationIssues } from '../contract/validationIssues.js';

// Both packages are CommonJS with a default export; under NodeNext the value sits on `.default`.

export const importFormatSchemaPath = new URL('../../specs/portfolio/import-format.schema.json', import.meta.url);

/** One reason a document was refused: a JSON pointer into the document and what is wrong there. */
export interface ImportProblem {
  path: string;
  message: string;
}

/** Thrown when a document fails validation; nothing has been written. */
export class PortfolioImportError extends Error {
  override readonly name = 'PortfolioImportError';

  constructor(readonly details: ImportProblem[]) {
    super(
      `The portfolio document is invalid (${details.length} ${details.length === 1 ? 'problem' : 'problems'}): ` +
        details
          .slice(0, 5)
          .map((problem) => `${problem.path || '/'} ${problem.message}`)
          .join('; ') +
        (details.length > 5 ? '; …' : ''),
    );
  }
}

/** The document's list members, in document order, with the stored kind of their items. */
export const listMembers = [
  ['outcomes', 'outcome'],
  ['posts', 'post'],
  ['pages', 'page'],
  ['experience', 'experience'],
  ['skills', 'skill'],
  ['stats', 'stat'],
  ['awards', 'award'],
  ['education', 'credential'],
  ['testimonials', 'testimonial'],
  ['links', 'link'],
] as const satisfies readonly (readonly [keyof PortfolioDocument, PortfolioItemKind])[];

export type ListMember = (typeof listMembers)[number][0];

const slugMembers = ['outcomes', 'posts', 'pages'] as const;

/** The id prefix of each list-only member, as the contract's schemas demand. */
export const idPrefixes = {
  experience: 'exp',
  skills: 'skl',
  stats: 'sta',
  awards: 'awd',
  education: 'crd',
  testimonials: 'tst',
  links: 'lnk',
} as const;
type IdMember = keyof typeof idPrefixes;
const idMembers = Object.keys(idPrefixes) as IdMember[];

// ─── validation ──────────────────────────────────────────────────────────────────────────────

let compiledValidator: ValidateFunction | undefined;

function schemaValidator(): ValidateFunction {
  if (!compiledValidator) {
    const schema = JSON.parse(readFileSync(importFormatSchemaPath, 'utf8')) as Record<string, unknown>;
    // Strict here: the import schema is ours alone, so an unknown keyword in it is a mistake.
    const ajv = createAjv2020({ allErrors: true, strict: true, discriminator: true });
    compiledValidator = ajv.compile(schema);
  }
  return compiledValidator;
}


const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function recordsAt(document: Record<string, unknown>, member: string): [number, Record<string, unknown>][] {
  const list = document[member];
  if (!Array.isArray(list)) return [];
  return list.flatMap((item, index): [number, Record<string, unknown>][] => (isRecord(item) ? [[index, item]] : []));
}

const schemePattern = /^([A-Za-z][A-Za-z0-9+.-]*):/;

/** Why `value` is not an acceptable address, or undefined. Syntax is the schema's `uri` format's job. */
function urlProblem(value: unknown, allowMailto: boolean): string | undefined {
  if (typeof value !== 'string') return undefined;
  const allowed = allowMailto ? 'http, https or mailto' : 'http or https';
  const scheme = schemePattern.exec(value)?.[1]?.toLowerCase();
  if (scheme === undefined) return `must be an absolute ${allowed} address`;
  if (scheme === 'http' || scheme === 'https') {
    return /^https?:\/\/[^/?#\s]+/i.test(value) && URL.canParse(value)
      ? undefined
      : `must be an absolute ${scheme} address with a host`;
  }
  if (scheme === 'mailto' && allowMailto) return value.length > 'mailto:'.length ? undefined : 'must name an address';
  return `uses the scheme "${scheme}"; only ${allowed} addresses are allowed`;
}

/** The rules the JSON Schema cannot express. Works on any input, so all problems come out at once. */
function semanticProblems(document: unknown): ImportProblem[] {
  if (!isRecord(document)) return [];
  const problems: ImportProblem[] = [];

  const assetIds = new Set<string>();
  const firstAssetAt = new Map<string, number>();
  for (const [index, asset] of recordsAt(document, 'assets')) {
    if (typeof asset.id === 'string') {
      const first = firstAssetAt.get(asset.id);
      if (first !== undefined) {
        problems.push({ path: `/assets/${index}/id`, message: `duplicates the id of /assets/${first}` });
      } else firstAssetAt.set(asset.id, index);
      assetIds.add(asset.id);
    }
    const problem = urlProblem(asset.url, false);
    if (problem) problems.push({ path: `/assets/${index}/url`, message: problem });
  }

  const checkAssetReference = (value: unknown, path: string): void => {
    if (typeof value === 'string' && !assetIds.has(value)) {
      problems.push({ path, message: `refers to the asset "${value}", which is not in /assets` });
    }
  };
  const checkUnique = (member: string, key: 'slug' | 'id'): void => {
    const firstAt = new Map<string, number>();
    for (const [index, item] of recordsAt(document, member)) {
      const value = item[key];
      if (typeof value !== 'string') continue;
      const first = firstAt.get(value);
      if (first !== undefined) {
        problems.push({ path: `/${member}/${index}/${key}`, message: `duplicates the ${key} of /${member}/${first}` });
      } else firstAt.set(value, index);
    }
  };
  const checkDateOrder = (member: string, item: Record<string, unknown>, index: number): void => {
    const { startDate, endDate } = item;
    if (typeof startDate === 'string' && typeof endDate === 'string' && endDate < startDate) {
      problems.push({ path: `/${member}/${index}/endDate`, message: 'must not be before startDate' });
    }
  };
  const checkUrl = (value: unknown, path: string): void => {
    const problem = urlProblem(value, true);
    if (problem) problems.push({ path, message: problem });
  };

  for (const member of slugMembers) checkUnique(member, 'slug');
  for (const member of idMembers) checkUnique(member, 'id');

  if (isRecord(document.profile)) checkAssetReference(document.profile.avatar, '/profile/avatar');
  for (const [index, outcome] of recordsAt(document, 'outcomes')) {
    checkAssetReference(outcome.coverImage, `/outcomes/${index}/coverImage`);
  }
  for (const [index, post] of recordsAt(document, 'posts')) {
    checkAssetReference(post.coverImage, `/posts/${index}/coverImage`);
  }
  for (const [pageIndex, page] of recordsAt(document, 'pages')) {
    for (const [blockIndex, block] of recordsAt(page, 'blocks')) {
      const at = `/pages/${pageIndex}/blocks/${blockIndex}`;
      if (block.type === 'image') checkAssetReference(block.image, `${at}/image`);
      if (block.type === 'gallery' && Array.isArray(block.images)) {
        block.images.forEach((image, imageIndex) => checkAssetReference(image, `${at}/images/${imageIndex}`));
      }
      if (block.type === 'callToAction') checkUrl(block.url, `${at}/url`);
    }
  }
  for (const [index, entry] of recordsAt(document, 'experience')) checkDateOrder('experience', entry, index);
  for (const [index, award] of recordsAt(document, 'awards')) checkUrl(award.url, `/awards/${index}/url`);
  for (const [index, credential] of recordsAt(document, 'education')) {
    checkUrl(credential.url, `/education/${index}/url`);
    checkDateOrder('education', credential, index);
  }
  for (const [index, testimonial] of recordsAt(document, 'testimonials')) {
    checkAssetReference(testimonial.avatar, `/testimonials/${index}/avatar`);
  }
  for (const [index, link] of recordsAt(document, 'links')) checkUrl(link.url, `/links/${index}/url`);
  problems.push(...markupInPlainText(document, ''));
  return problems;
}

/** The members that hold HTML, sanitized when imported; every other string is plain text. */
const htmlMembers = new Set(['bodyHtml', 'html']);

/**
 * What a browser would read as the start of a tag, a comment or a declaration: `<` followed by a
 * letter, `/`, `!` or `?`. A lone `<` (as in `a < b` or `<3`) is text.
 */
const tagStart = /<[A-Za-z!/?]/;

/**
 * Plain-text members are shown as text by clients, and some will put them into HTML as they are:
 * markup in them is refused, so nothing stored can become a tag, an event handler or a script.
 */
function markupInPlainText(value: unknown, path: string): ImportProblem[] {
  if (typeof value === 'string') {
    return tagStart.test(value)
      ? [{ path, message: 'is plain text: markup (a "<" that starts a tag) is not allowed; put formatted text in a richText block or a bodyHtml member, which are sanitized' }]
      : [];
  }
  if (Array.isArray(value)) return value.flatMap((item, index) => markupInPlainText(item, `${path}/${index}`));
  if (!isRecord(value)) return [];
  return Object.entries(value).flatMap(([member, item]) =>
    htmlMembers.has(member) && typeof item === 'string' ? [] : markupInPlainText(item, `${path}/${escapePointerToken(member)}`),
  );
}

/** Every problem of a document (schema and semantic), in document order; empty when it is valid. */
export function validatePortfolioDocument(document: unknown): ImportProblem[] {
  const validate = schemaValidator();
  // The block-level `type` schema (required, string, enum) already reports everything the
  // discriminator would, so its errors would only repeat them.
  const schemaProblems = validate(document)
    ? []
    : validationIssues(
        (validate.errors ?? []).filter((error) => error.keyword !== 'discriminator'),
        'body',
      ).map(({ path, message }) => ({ path, message }));

  const seen = new Set<string>();
  const problems: ImportProblem[] = [];
  for (const problem of [...schemaProblems, ...semanticProblems(document)]) {
    const key = `${problem.path}\u0000${problem.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      problems.push(problem);
    }
  }
  return problems.sort((a, b) => comparePaths(a.path, b.path));
}

/** The document's top-level members in the order the format lists them. */
const memberOrder = ['formatVersion', 'published', 'profile', 'assets', ...listMembers.map(([member]) => member)];

/**
 * Orders JSON pointers by where they point: top-level members in format order, array elements by
 * index, other members by name. Deterministic, so the same document always reports the same list.
 */
function comparePaths(a: string, b: string): number {
  const left = a.split('/').slice(1);
  const right = b.split('/').slice(1);
  for (let index = 0; index < Math.min(left.length, right.length); index += 1) {
    const x = left[index] ?? '';
    const y = right[index] ?? '';
    if (x === y) continue;
    if (/^\d+$/.test(x) && /^\d+$/.test(y)) return Number(x) - Number(y);
    if (index === 0) {
      const order = (member: string) => (memberOrder.includes(member) ? memberOrder.indexOf(member) : memberOrder.length);
      if (order(x) !== order(y)) return order(x) - order(y);
    }
    return x < y ? -1 : 1;
  }
  return left.length - right.length;
}

// ─── normalization ───────────────────────────────────────────────────────────────────────────

/**
 * Fills in every default, generates missing ids and sanitizes every HTML field. The result is
 * what is stored and exported. `input` must have passed validatePortfolioDocument().
 */
export function normalizePortfolioDocument(
  input: PortfolioDocumentInput,
  randomBytes: RandomBytes = defaultRandomBytes,
): PortfolioDocument {
  const usedIds = new Map<IdMember, Set<string>>(
    idMembers.map((member) => [
      member,
      new Set(((input[member] ?? []) as { id?: string }[]).flatMap((item) => (item.id ? [item.id] : []))),
    ]),
  );
  const idFor = (member: IdMember, given: string | undefined): string => {
    if (given) return given;
    const used = usedIds.get(member) ?? new Set<string>();
    let id: string;
    do id = newId(idPrefixes[member], randomBytes);
    while (used.has(id));
    used.add(id);
    return id;
  };

  return {
    formatVersion: 1,
    published: input.published,
    profile: {
      name: input.profile.name,
      headline: input.profile.headline,
      bioSummary: input.profile.bioSummary,
      location: input.profile.location ?? null,
      avatar: input.profile.avatar ?? null,
    },
    assets: (input.assets ?? []).map((asset) => ({
      id: asset.id,
      url: asset.url,
      altText: asset.altText,
      mimeType: asset.mimeType,
      width: asset.width ?? null,
      height: asset.height ?? null,
    })),
    outcomes: (input.outcomes ?? []).map((outcome) => ({
      slug: outcome.slug,
      published: outcome.published,
      title: outcome.title,
      summary: outcome.summary,
      client: outcome.client ?? null,
      metrics: (outcome.metrics ?? []).map((metric) => ({ label: metric.label, value: metric.value })),
      bodyHtml: sanitizeHtml(outcome.bodyHtml),
      coverImage: outcome.coverImage ?? null,
      tags: [...(outcome.tags ?? [])],
    })),
    posts: (input.posts ?? []).map((post) => ({
      slug: post.slug,
      published: post.published,
      title: post.title,
      excerpt: post.excerpt,
      bodyHtml: sanitizeHtml(post.bodyHtml),
      coverImage: post.coverImage ?? null,
      tags: [...(post.tags ?? [])],
      publishedAt: post.publishedAt,
      updatedAt: post.updatedAt ?? post.publishedAt,
    })),
    pages: (input.pages ?? []).map((page) => ({
      slug: page.slug,
      published: page.published,
      title: page.title,
      description: page.description ?? '',
      blocks: page.blocks.map(normalizeBlock),
    })),
    experience: (input.experience ?? []).map((entry) => ({
      id: idFor('experience', entry.id),
      published: entry.published,
      organization: entry.organization,
      role: entry.role,
      location: entry.location ?? null,
      startDate: entry.startDate,
      endDate: entry.endDate ?? null,
      summary: entry.summary,
      highlights: [...(entry.highlights ?? [])],
    })),
    skills: (input.skills ?? []).map((skill) => ({
      id: idFor('skills', skill.id),
      published: skill.published,
      name: skill.name,
      category: skill.category ?? null,
      level: skill.level ?? null,
      tags: [...(skill.tags ?? [])],
    })),
    stats: (input.stats ?? []).map((stat) => ({
      id: idFor('stats', stat.id),
      published: stat.published,
      label: stat.label,
      value: stat.value,
      unit: stat.unit ?? null,
      description: stat.description ?? null,
    })),
    awards: (input.awards ?? []).map((award) => ({
      id: idFor('awards', award.id),
      published: award.published,
      title: award.title,
      issuer: award.issuer,
      awardedOn: award.awardedOn,
      description: award.description ?? null,
      url: award.url ?? null,
    })),
    education: (input.education ?? []).map((credential) => ({
      id: idFor('education', credential.id),
      published: credential.published,
      kind: credential.kind,
      title: credential.title,
      institution: credential.institution,
      startDate: credential.startDate ?? null,
      endDate: credential.endDate ?? null,
      url: credential.url ?? null,
      description: credential.description ?? null,
    })),
    testimonials: (input.testimonials ?? []).map((testimonial) => ({
      id: idFor('testimonials', testimonial.id),
      published: testimonial.published,
      quote: testimonial.quote,
      authorName: testimonial.authorName,
      authorRole: testimonial.authorRole ?? null,
      authorCompany: testimonial.authorCompany ?? null,
      avatar: testimonial.avatar ?? null,
    })),
    links: (input.links ?? []).map((link) => ({
      id: idFor('links', link.id),
      published: link.published,
      kind: link.kind,
      label: link.label,
      url: link.url,
    })),
  };
}

function normalizeBlock(block: BlockInput): ImportBlock {
  switch (block.type) {
    case 'heading':
      return { type: 'heading', level: block.level, text: block.text };
    case 'richText':
      return { type: 'richText', html: sanitizeHtml(block.html) };
    case 'image':
      return { type: 'image', image: block.image, caption: block.caption ?? null };
    case 'gallery':
      return { type: 'gallery', images: [...block.images] };
    case 'quote':
      return { type: 'quote', text: block.text, attribution: block.attribution ?? null };
    case 'callToAction':
      return { type: 'callToAction', label: block.label, url: block.url };
  }
}

// ─── rendering ───────────────────────────────────────────────────────────────────────────────

/** One stored item: its import form and its API forms. */
export interface RenderedItem {
  kind: PortfolioItemKind;
  position: number;
  id: string | null;
  slug: string | null;
  published: boolean;
  source: unknown;
  rendered: unknown;
  summary: PageSummary | null;
}

export interface RenderedPortfolio {
  profile: ProfileItem;
  items: RenderedItem[];
  /** The whole `PortfolioResponse` (published items only). */
  document: PortfolioResponse;
}

/** Builds every API form of a normalized document; `updatedAt` is the import time (ms). */
export function renderPortfolio(document: PortfolioDocument, updatedAt: number): RenderedPortfolio {
  const assetsById = new Map<string, Asset>(document.assets.map((asset) => [asset.id, renderAsset(asset)]));
  const asset = (id: string): Asset => {
    const found = assetsById.get(id);
    if (!found) throw new Error(`Unresolved asset reference "${id}" (the document was not validated).`);
    return found;
  };
  const optionalAsset = (id: string | null): Asset | null => (id === null ? null : asset(id));

  const profile: ProfileItem = {
    name: document.profile.name,
    headline: document.profile.headline,
    bioSummary: document.profile.bioSummary,
    location: document.profile.location,
    avatar: optionalAsset(document.profile.avatar),
    updatedAt: new Date(updatedAt).toISOString(),
  };

  const renderBlock = (block: ImportBlock): PageBlock => {
    switch (block.type) {
      case 'image':
        return { type: 'image', image: asset(block.image), caption: block.caption };
      case 'gallery':
        return { type: 'gallery', images: block.images.map(asset) };
      default:
        return { ...block };
    }
  };
  const pageSummary = (page: ImportPage): PageSummary => ({
    slug: page.slug,
    title: page.title,
    description: page.description,
  });

  const renderers: { [M in ListMember]: (item: PortfolioDocument[M][number]) => unknown } = {
    outcomes: (outcome): OutcomeItem => ({
      slug: outcome.slug,
      title: outcome.title,
      summary: outcome.summary,
      client: outcome.client,
      metrics: outcome.metrics.map((metric) => ({ ...metric })),
      bodyHtml: outcome.bodyHtml,
      coverImage: optionalAsset(outcome.coverImage),
      tags: [...outcome.tags],
    }),
    posts: (post): PostItem => ({
      slug: post.slug,
      title: post.title,
      excerpt: post.excerpt,
      bodyHtml: post.bodyHtml,
      coverImage: optionalAsset(post.coverImage),
      tags: [...post.tags],
      publishedAt: post.publishedAt,
      updatedAt: post.updatedAt,
    }),
    pages: (page): PageItem => ({ ...pageSummary(page), blocks: page.blocks.map(renderBlock) }),
    experience: (entry): ExperienceEntry => ({
      id: entry.id,
      organization: entry.organization,
      role: entry.role,
      location: entry.location,
      startDate: entry.startDate,
      endDate: entry.endDate,
      summary: entry.summary,
      highlights: [...entry.highlights],
    }),
    skills: (skill): Skill => ({
      id: skill.id,
      name: skill.name,
      category: skill.category,
      level: skill.level,
      tags: [...skill.tags],
    }),
    stats: (stat): Stat => ({
      id: stat.id,
      label: stat.label,
      value: stat.value,
      unit: stat.unit,
      description: stat.description,
    }),
    awards: (award): Award => ({
      id: award.id,
      title: award.title,
      issuer: award.issuer,
      awardedOn: award.awardedOn,
      description: award.description,
      url: award.url,
    }),
    education: (credential): Credential => ({
      id: credential.id,
      kind: credential.kind,
      title: credential.title,
      institution: credential.institution,
      startDate: credential.startDate,
      endDate: credential.endDate,
      url: credential.url,
      description: credential.description,
    }),
    testimonials: (testimonial): Testimonial => ({
      id: testimonial.id,
      quote: testimonial.quote,
      authorName: testimonial.authorName,
      authorRole: testimonial.authorRole,
      authorCompany: testimonial.authorCompany,
      avatar: optionalAsset(testimonial.avatar),
    }),
    links: (link): Link => ({ id: link.id, kind: link.kind, label: link.label, url: link.url }),
  };

  const items: RenderedItem[] = [];
  const published: Record<string, unknown[]> = {};
  for (const [member, kind] of listMembers) {
    const list = document[member] as (PortfolioDocument[ListMember][number] & { published: boolean })[];
    const render = renderers[member] as (item: unknown) => unknown;
    published[member] = [];
    list.forEach((item, position) => {
      const rendered = render(item);
      items.push({
        kind,
        position,
        id: 'id' in item ? item.id : null,
        slug: 'slug' in item ? item.slug : null,
        published: item.published,
        source: item,
        rendered,
        summary: member === 'pages' ? pageSummary(item as ImportPage) : null,
      });
      if (item.published) published[member]?.push(rendered);
    });
  }

  const portfolioDocument = { profile, ...published } as unknown as PortfolioResponse;
  return { profile, items, document: portfolioDocument };
}

function renderAsset(asset: ImportAsset): Asset {
  return {
    id: asset.id,
    url: asset.url,
    altText: asset.altText,
    mimeType: asset.mimeType,
    width: asset.width,
    height: asset.height,
  };
}

// ─── import / export ─────────────────────────────────────────────────────────────────────────

export interface ImportSummary {
  tenantId: string;
  published: boolean;
  /** When the portfolio was replaced, ms since the epoch. */
  updatedAt: number;
  assets: number;
  /** Per list member of the document: how many items, and how many of them are published. */
  items: Record<ListMember, { total: number; published: number }>;
}

export interface ImportOptions {
  /** Source of the random ids given to list items that have none. */
  randomBytes?: RandomBytes;
}

/**
 * The revision of a newly created portfolio row. Random rather than 1: a row deleted with its tenant
 * and created again must not repeat a revision that a reader may still hold an answer for.
 */
function firstRevision(randomBytes: RandomBytes): number {
  return Buffer.from(randomBytes(6)).readUIntBE(0, 6);
}

/**
 * Replaces the tenant's whole portfolio with `document` (parsed JSON in import format) in one
 * transaction. Throws PortfolioImportError listing every problem of an invalid document, or
 * StoreError('tenant_not_found'); in both cases nothing is written.
 */
export function importPortfolio(
  db: BetterSqlite3.Database,
  tenantId: string,
  document: unknown,
  now: () => number = Date.now,
  options: ImportOptions = {},
): ImportSummary {
  const problems = validatePortfolioDocument(document);
  if (problems.length > 0) throw new PortfolioImportError(problems);
  const randomBytes = options.randomBytes ?? defaultRandomBytes;
  const normalized = normalizePortfolioDocument(document as PortfolioDocumentInput, randomBytes);
  const updatedAt = now();
  const rendered = renderPortfolio(normalized, updatedAt);
  const orm = drizzleFor(db);

  orm.transaction(
    (tx) => {
      const tenant = tx.select({ id: tenants.id }).from(tenants).where(eq(tenants.id, tenantId)).get();
      if (!tenant) throw new StoreError('tenant_not_found', `No tenant with id "${tenantId}".`);
      tx.delete(portfolioItems).where(eq(portfolioItems.tenantId, tenantId)).run();
      tx.delete(assets).where(eq(assets.tenantId, tenantId)).run();
      const portfolioRow = {
        tenantId,
        published: normalized.published ? 1 : 0,
        profileSourceJson: JSON.stringify(normalized.profile),
        profileRenderedJson: JSON.stringify(rendered.profile),
        documentJson: JSON.stringify(rendered.document),
        updatedAt,
      };
      tx.insert(portfolios)
        .values({ ...portfolioRow, revision: firstRevision(randomBytes) })
        .onConflictDoUpdate({ target: portfolios.tenantId, set: { ...portfolioRow, revision: sql`${portfolios.revision} + 1` } })
        .run();
      normalized.assets.forEach((asset, position) => {
        tx.insert(assets)
          .values({ tenantId, position, ...asset })
          .run();
      });
      for (const item of rendered.items) {
        tx.insert(portfolioItems)
          .values({
            tenantId,
            kind: item.kind,
            position: item.position,
            id: item.id,
            slug: item.slug,
            published: item.published ? 1 : 0,
            sourceJson: JSON.stringify(item.source),
            renderedJson: JSON.stringify(item.rendered),
            summaryJson: item.summary === null ? null : JSON.stringify(item.summary),
          })
          .run();
      }
    },
    { behavior: 'immediate' },
  );

  const counts = Object.fromEntries(
    listMembers.map(([member]) => {
      const list = normalized[member] as { published: boolean }[];
      return [member, { total: list.length, published: list.filter((item) => item.published).length }];
    }),
  ) as ImportSummary['items'];
  return { tenantId, published: normalized.published, updatedAt, assets: normalized.assets.length, items: counts };
}

/**
 * The tenant's portfolio in import form, exactly as stored (sanitized HTML, generated ids, every
 * optional member present). Undefined when the tenant has never imported one; StoreError for an
 * unknown tenant.
 */
export function exportPortfolio(db: BetterSqlite3.Database, tenantId: string): PortfolioDocument | undefined {
  const orm = drizzleFor(db);
  return orm.transaction((tx) => {
    const tenant = tx.select({ id: tenants.id }).from(tenants).where(eq(tenants.id, tenantId)).get();
    if (!tenant) throw new StoreError('tenant_not_found', `No tenant with id "${tenantId}".`);
    const portfolio = tx
      .select({ published: portfolios.published, profileSourceJson: portfolios.profileSourceJson })
      .from(portfolios)
      .where(eq(portfolios.tenantId, tenantId))
      .get();
    if (!portfolio) return undefined;
    const assetRows = tx
      .select({
        id: assets.id,
        url: assets.url,
        altText: assets.altText,
        mimeType: assets.mimeType,
        width: assets.width,
        height: assets.height,
      })
      .from(assets)
      .where(eq(assets.tenantId, tenantId))
      .orderBy(asc(assets.position))
      .all();
    const itemRows = tx
      .select({ kind: portfolioItems.kind, sourceJson: portfolioItems.sourceJson })
      .from(portfolioItems)
      .where(eq(portfolioItems.tenantId, tenantId))
      .orderBy(asc(portfolioItems.kind), asc(portfolioItems.position))
      .all();
    const byKind = new Map<PortfolioItemKind, unknown[]>();
    for (const row of itemRows) {
      const list = byKind.get(row.kind) ?? [];
      list.push(JSON.parse(row.sourceJson));
      byKind.set(row.kind, list);
    }
    const lists = Object.fromEntries(listMembers.map(([member, kind]) => [member, byKind.get(kind) ?? []]));
    return {
      formatVersion: 1,
      published: portfolio.published === 1,
      profile: JSON.parse(portfolio.profileSourceJson),
      assets: assetRows,
      ...lists,
    } as PortfolioDocument;
  });
}
